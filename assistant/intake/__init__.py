"""Reading a Slack event into the log: the fields an event must have, what a message carries
(its text, files and linked messages, and who may see them), read within the acknowledgement's
deadline, and the user entry that records it.

May import: `assistant.run` (the recorder, and the scheduler it asks for an answer),
`assistant.slack`, `assistant.model.client`, `assistant.settings`, `context`."""
