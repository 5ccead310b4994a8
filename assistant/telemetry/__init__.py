"""OpenTelemetry traces and metrics, opt-in by the SDK's own variables (docs/operations.md,
"Watching it in production"): `setup.py` builds the SDK's providers and OTLP exporters when
`OTEL_EXPORTER_OTLP_ENDPOINT` (or `..._TRACES_ENDPOINT`) is set, else nothing is imported;
`genai.py` names the GenAI semantic conventions' attributes (v1.44.0, development status) and
captures contents only on their opt-in; `calls.py` makes a `chat` span per model call, `runs.py` the
`invoke_agent` span of a run and an `execute_tool` span per tool call from the entries the recorder
writes; `metrics.py` the instruments; `slack.py` Slack's counters; `start.py` opens it all, or
returns None.

May import `run`, `model`, `slack`, `context` and slack-sdk (it watches them; they only call
the small protocols they define, `EntryObserver` and `CallWatcher`), never the settings: the
SDK reads its environment.
"""
