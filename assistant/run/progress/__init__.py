"""What Slack shows while a run works: the agent session's status, the task cards of its
steps, the panel's status and the feedback buttons that end an answer."""
