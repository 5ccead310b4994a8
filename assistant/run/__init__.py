"""The run: the agent loop, the scheduler and its leases, the recorder every entry goes through,
the prompt within its budget, the tools, the caps on posting, streamed posts and the progress
shown while a run works.

Its rooms are layers, from the bottom up: `channels/`, `core/`, `approvals/`, `progress/`,
`streaming/`, `tools/`, `loop/`, `stopping/`, `scheduling/`; each imports only those below it
(`SUB_ROOMS` in tests/project/test_imports.py).

May import: `assistant.slack`, `assistant.model.client`, `assistant.mcp` (the MCP servers' tools),
`context`. Never the settings, the intake,
the panel or the wiring: what it needs is passed in."""
