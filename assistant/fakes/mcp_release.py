"""The demo's MCP server (`assistant demo`), on the official SDK, over stdio: one read-only tool,
`checklist`, what to check before a release. `python -m assistant.fakes.mcp_release`."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

CHECKLIST = (
    "Before shipping release {release}, check:\n"
    "1. the migration runs cleanly on a copy of production data;\n"
    "2. the rollback steps are written down;\n"
    "3. someone is on call for the hour after the deploy."
)

releases = MCPServer("releases")


@releases.tool(annotations=ToolAnnotations(read_only_hint=True))
def checklist(release: str) -> str:
    """What to check before shipping a release."""
    return CHECKLIST.format(release=release[:40])


if __name__ == "__main__":
    releases.run()
