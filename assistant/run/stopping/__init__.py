"""The stop button: how a running run learns of it, and what the thread keeps when it stops."""
