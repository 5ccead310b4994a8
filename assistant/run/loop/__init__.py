"""The agent loop: the prompt within its budget, the model's steps recorded and carried out,
the caps on what one answer may post, and who may use the bot in a channel."""
