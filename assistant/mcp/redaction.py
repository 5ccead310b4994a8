"""One redaction for every text a server sends that the app logs, traces or records: the
values of the MCP file's headers (`${VAR}`s read, the whole value and each of its words of
MIN_SECRET characters or more), tokens and keys by their vendors' prefixes (Slack `xox…-` and
`xapp-`, OpenAI `sk-`, GitHub `ghp_` and `github_pat_`, GitLab `glpat-`, AWS `AKIA…`, …: the
export's list, `context.redaction.SECRET`), and what follows `Bearer`, `Basic` or `Token`.
Each becomes `[secret]`.

A server's texts reach the app's output three ways: the results and refusals recorded in a
thread's log (printed on the console, exported, carried by the telemetry's spans), the lines
of the process's log that name what a server said, and the SDK's own log lines, which may
quote a server's answer. The first two are redacted where they are made
(`assistant.mcp.connection`); the log lines, the app's and the SDK's, also pass a filter
(`redact_logs`) that applies every redaction in use."""

from __future__ import annotations

import logging
import re
import weakref
from collections.abc import Iterable
from dataclasses import dataclass

from assistant.mcp.config import ServerConfig
from context.redaction import SECRET

MIN_SECRET = 8  # a header's word shorter than this ("Bearer") is not taken for its secret
SECRET_MARK = "[secret]"
_SCHEMES = re.compile(r"\b(Bearer|Basic|Token)(\s+)[A-Za-z0-9._~+/=-]{8,}", re.IGNORECASE)
# The loggers that may carry a server's words: the app's MCP edge, the SDK's client and the
# HTTP client under it (created here if not yet, so that the filter is on them from the start).
LOGGERS = (
    "assistant.mcp",
    "assistant.mcp.connection",
    "assistant.mcp.servers",
    "assistant.mcp.check",
    "mcp",
    "mcp.client.client",
    "mcp.client.session",
    "mcp.client.stdio",
    "mcp.client.streamable_http",
    "mcp.shared.jsonrpc_dispatcher",
    "mcp.shared._httpx_utils",
    "httpx2",
)


@dataclass(frozen=True, eq=False)
class Redaction:
    """The secrets of one MCP file, and the vendors' patterns."""

    secrets: tuple[str, ...] = ()  # the longest first: a whole value before its words

    @classmethod
    def of(cls, configs: Iterable[ServerConfig]) -> Redaction:
        found: list[str] = []
        for config in configs:
            values = [*config.headers.values()]
            if config.client_secret is not None:
                values.append(config.client_secret)
            for value in values:
                secret = value.get_secret_value()
                found += [part for part in [secret, *secret.split()] if len(part) >= MIN_SECRET]
        return cls(tuple(sorted(dict.fromkeys(found), key=len, reverse=True)))

    def text(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, SECRET_MARK)
        text = SECRET.sub(SECRET_MARK, text)
        return _SCHEMES.sub(lambda m: f"{m.group(1)}{m.group(2)}{SECRET_MARK}", text)


class _RedactedLog(logging.Filter):
    """A record's message, and its traceback, with every redaction in use applied: the
    message formatted here, its arguments dropped."""

    def __init__(self) -> None:
        super().__init__()
        self.redactions: weakref.WeakSet[Redaction] = weakref.WeakSet()

    def filter(self, record: logging.LogRecord) -> bool:
        redactions = list(self.redactions)
        if not redactions:
            return True
        message = record.getMessage()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        for redaction in redactions:
            message = redaction.text(message)
            if record.exc_text:
                record.exc_text = redaction.text(record.exc_text)
            if record.stack_info:
                record.stack_info = redaction.text(record.stack_info)
        # A handler formats `exc_text` as it is; one that formatted `exc_info` again would
        # print what was taken out.
        record.msg, record.args, record.exc_info = message, (), None
        return True


_FILTER = _RedactedLog()


def redact_logs(redaction: Redaction) -> None:
    """Apply `redaction` to every line of the MCP loggers from now on (as long as it is in
    use: the filter holds it weakly)."""
    _FILTER.redactions.add(redaction)
    for name in LOGGERS:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
