"""Routines: a prompt answered in a channel on a schedule. When each is due (`schedule.py`:
croniter in an IANA zone, or one ISO-8601 time) and the tick that claims the due ones once
across processes (`ticker.py`). It may import `run`, `slack`, `model`, `mcp`, `i18n` and
`context`; the wiring and the CLI import it, never the other way round."""
