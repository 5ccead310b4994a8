"""The MCP edge (docs/configuration.md#mcp-servers): the servers of ASSISTANT_MCP_FILE as checked
models (`config.py`), the live connection to each (`connection.py`), and the per-process
registry of them that a run asks for its tools and calls them through (`servers.py`).

May import: `context`, the `mcp` SDK, pydantic. Knows nothing of Slack, runs or the settings:
the wiring reads the file and passes what it needs."""
