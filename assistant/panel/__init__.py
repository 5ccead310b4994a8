"""Slack's assistant panel (its threads' greeting, prompts, titles and what the person is
viewing) and the feedback buttons under answers.

May import: `assistant.intake`, `assistant.run`, `assistant.slack`, `assistant.settings`,
`context`."""
