"""What every part of a run uses, below them all: the recorder every entry goes through and
the lease it checks, the run's context a tool is given, the prompt's budget, the caps on
posting, the agent session's status, the store's errors a run outlives, deferral (a Slack
outage, an approval's wait), and the streams a run leaves behind and the pace Slack allows.

May import: `run.channels` (and, like every room of `run/`, `i18n`, `slack`, `model`, `mcp`,
`context`). Nothing else of `run`."""
