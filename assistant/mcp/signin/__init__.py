"""Per-person sign-in to MCP servers (docs/configuration.md#signing-in-to-mcp-servers): the
MCP authorization specification's OAuth flow split at the browser's redirect (`flow.py`, on
the SDK's discovery helpers, models and PKCE), the secrets sealed at rest (`sealing.py`), and
the people's tokens kept, refreshed and handed to their calls (`tokens.py`)."""
