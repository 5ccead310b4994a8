"""Where Slack no longer takes suggested prompts.

Slack's agent sessions have no method for prompts (docs.slack.dev "Agent sessions" names only
`agents.sessions.setStatus` and `agents.sessions.rename`), and the 2026-08-20 changelog moves
only the status and the title: `assistant.threads.setSuggestedPrompts` stays the one way to
show them. Should a workspace stop taking it (the method gone with the assistant view, or
deprecated there), asking again on every panel or Messages tab opening would only fail again:
the refusal is remembered per workspace for the life of the process, with one line in its
log, as the sessions' refusals are (`assistant.run.core.sessions`)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from slack_sdk.errors import SlackApiError

from assistant.slack.connection import slack_error

log = logging.getLogger(__name__)

# Slack's answers for a method a workspace no longer serves; any other failure is that call's.
GONE = frozenset({"unknown_method", "deprecated_endpoint", "method_deprecated"})


@dataclass
class PromptRefusals:
    """The workspaces whose Slack refused suggested prompts for good, and why."""

    refused: dict[str, str] = field(default_factory=dict)  # team -> Slack's error

    def applies(self, team: str) -> bool:
        return team not in self.refused

    def note(self, team: str, exc: BaseException) -> None:
        """Remember a failure that means the method is gone there (one line per workspace)."""
        if not isinstance(exc, SlackApiError):
            return
        error = slack_error(exc)
        if error in GONE and team not in self.refused:
            self.refused[team] = error
            log.warning(
                "Slack refused suggested prompts in workspace %s (%s): none are set there "
                "from now on (assistant.threads.setSuggestedPrompts has no sessions method "
                "to fall back to)",
                team,
                error,
            )
