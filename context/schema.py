"""The JSON Schema of the log format, for other tools to validate logs with."""

from __future__ import annotations

from typing import Any

from context.entry import LOG_ADAPTER

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def log_json_schema() -> dict[str, Any]:
    schema = LOG_ADAPTER.json_schema()
    return {
        "$schema": SCHEMA_DIALECT,
        "title": "Context log",
        "description": "An append-only array of entries {index, turn, timestamp, role, content}.",
        **schema,
    }
