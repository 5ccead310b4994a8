"""The tools the model calls, one module each, and what a tool is given (`run_context.py`).
Their schemas and the parsing of their arguments are the model's request
(`assistant.model.tool_calls`)."""
