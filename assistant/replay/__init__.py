"""Replaying a saved log against a model, and the report of a replay.

May import: `assistant.run`, `assistant.model.client`, `assistant.slack`, `assistant.settings`,
`context`. Never Slack itself: a replay posts nothing."""
