"""Streamed answers for one process (ASSISTANT_STREAM=auto): whether Slack takes streams at
all, every workspace's pacing, the client stream calls go through; and, for a run resumed
after a crash, what to do with the streams a dead process left
(docs/architecture.md#streamed-answers).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from assistant.run.core.pacing import StreamPacing
from assistant.run.progress.step_cards import StepCards
from assistant.run.streaming.post import PostStream
from assistant.slack.connection import retry_after, slack_error

if TYPE_CHECKING:
    from assistant.run.core.run_context import RunContext

log = logging.getLogger(__name__)

# Slack will not stream for this app at all: post whole, and stop asking.
REFUSALS = frozenset({"unknown_method", "not_allowed_token_type", "missing_scope", "not_allowed"})
_PERSON = re.compile(r"<@([UW][A-Z0-9]+)>")


@dataclass
class SlackStreaming:
    """Streams for one process: ASSISTANT_STREAM=auto."""

    pacing: StreamPacing = field(default_factory=StreamPacing)
    refused: str | None = None  # Slack's answer that ended streaming for this process
    _clients: dict[int, AsyncWebClient] = field(default_factory=dict)

    def open(self, ctx: RunContext) -> PostStream | None:
        """A stream for the postMessage call starting in the run's reply, or None when its
        text will be posted whole."""
        if self.refused is not None or ctx.client is None:
            return None
        recipient = _recipient(ctx)
        if recipient is None and not ctx.key.channel.startswith("D"):
            return None  # outside a DM Slack wants to know whom it is streaming to
        pacing = self.pacing.of(ctx.key.team)

        def refused(error: SlackApiError) -> None:
            if error.response.status_code == 429:
                pacing.starts.hold(retry_after(error, 1.0))
            elif slack_error(error) in REFUSALS and self.refused is None:
                self.refused = slack_error(error)
                log.warning("Slack refused chat.startStream (%s): posting whole", self.refused)

        return PostStream(ctx, self.client_for(ctx.client), pacing, recipient, refused)

    def cards(self, ctx: RunContext, first: int) -> StepCards | None:
        """The task cards of the run's steps from entry `first` on, or None when its texts
        will be posted whole."""
        if self.refused is not None or ctx.client is None:
            return None
        recipient = _recipient(ctx)
        if recipient is None and not ctx.key.channel.startswith("D"):
            return None
        pacing = self.pacing.of(ctx.key.team)
        return StepCards(ctx, self.client_for(ctx.client), pacing, recipient, first)

    def client_for(self, client: AsyncWebClient) -> AsyncWebClient:
        """The app's client without slack-sdk's retries (same session, token and API base):
        a retried append could show a piece twice, a retried start leave a stream nobody
        knows of. A failed start means the text is posted whole, a failed append or stop
        that the message is replaced."""
        found = self._clients.get(id(client))
        if found is None:
            found = self._clients[id(client)] = AsyncWebClient(
                token=client.token,
                base_url=client.base_url,
                timeout=client.timeout,
                session=client.session,
                retry_handlers=[],
            )
        return found


def _recipient(ctx: RunContext) -> str | None:
    """The person being answered: the author of the newest message in the log."""
    for entry in reversed(ctx.log.entries):
        if entry.role == "user":
            match = _PERSON.fullmatch(getattr(entry.content, "userid", ""))
            return match.group(1) if match else None
    return None
