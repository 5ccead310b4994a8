"""What Slack shows while a run works: its status (the agent session, through
`run/core/sessions.py`, or the older ways), the task cards of its steps, the panel's status and
the feedback buttons that end an answer."""
