"""The ways the app is run: HTTP (the ASGI app, its request guard and server, the health
check), Socket Mode, and the demo against the fakes.

May import: the wiring (`assistant.app`), `assistant.settings`, `assistant.slack`, `context`,
and, for the demo only, `assistant.fakes`."""
