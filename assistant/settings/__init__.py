"""The settings and the files they read (docs/configuration.md): the environment and `.env`
read and checked into one `Settings` at start, every problem in one message
(`environment.py`); the offline commands' smaller settings (`StoreSettings`, `ChannelSettings`,
`UsageSettings`); the files named there: the MCP servers' (`mcp_file.py`), the personas
(`persona_file.py`), the prices (`prices.py`), the assistant panel's values (`panel.py`), and
the one bounded read of any file given to the app or a command (`input_files.py`).

May import: `assistant.run`, `assistant.mcp`, `assistant.model`, `assistant.i18n`,
`assistant.slack`, `context` (for the values they build), pydantic-settings. Nothing reads
the environment but this room."""
