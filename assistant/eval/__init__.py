"""Evaluation (`assistant eval`, docs/architecture.md#eval): every recorded decision of the
assistant as a case (the log as it stood before it, the recorded step as the reference), asked
of a model configuration again, scored offline, summed up with pass@1 and pass^k.

May import: `assistant.replay`, `assistant.settings`, `assistant.run`, `assistant.slack`,
`assistant.model`, `context`. Nothing is posted and no store's thread is written: a case asks
the model one step and stops there."""
