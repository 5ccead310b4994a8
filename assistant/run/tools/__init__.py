"""The tools the model calls, one module each, and the run's toolbox of them. What a tool is
given is `run/core/run_context.py`'s. Their schemas and the parsing of their arguments are the
model's request (`assistant.model.tool_calls`)."""
