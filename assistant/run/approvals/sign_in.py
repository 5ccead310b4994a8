"""A run's side of a person's sign-in to an MCP server
(docs/slack-features.md#connecting-to-a-tool): a call of an `auth: user` server whose asker
is not connected waits as an approval does (the run stopped, the session suspended, the lease
given up), with a **Connect <server>** link only that person sees (an ephemeral message). The
HTTP app's callback records whether they connected (`assistant/intake/sign_ins.py`) and makes
the thread due at once; the resumed run makes the call as them, or records that it was not
made. The entries hold no token and no state: a replay reads them and signs in nowhere."""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from assistant.run.approvals.asking import ApprovalPending
from assistant.run.approvals.entries import RESULT_PREFIXES
from assistant.run.core.lease import ensure_lease
from assistant.run.core.recorder import Recorder
from assistant.run.core.run_context import RunContext
from assistant.slack.connection import SLACK_FAILURES, slack_reason
from context.entry import STOP_PREFIX, Entry, SystemEntry, format_timestamp
from context.storage import ThreadKey
from context.storage.async_store import async_store
from context.toolcalls import ServerToolCall

log = logging.getLogger(__name__)

CONNECT = "mcp_connect"  # the link button's action id (its click is only acknowledged)
REQUESTED = (
    "Sign-in requested: {name} (entry {index}) waits for <@{user}> to connect to the MCP "
    "server {server} until {until}."
)
CONNECTED = "Sign-in of {name} (entry {index}): <@{user}> connected to {server} at {at}."
NOT_CONNECTED = (
    "Sign-in of {name} (entry {index}): <@{user}> did not connect to {server} at {at}: {why}."
)
# The result of the stand-in `SERVER__connect` (assistant/mcp/servers.py, STAND_IN) once the
# person connected: the server's own tools are offered from the run's next step.
STAND_IN = "connect"
CONNECTED_RESULT = (
    "Result of {name} (entry {index}): <@{user}> connected to the MCP server {server}; its "
    "tools are offered from now on."
)
NOT_CARRIED_OUT = (
    "Not carried out: {name} (entry {index}): <@{user}> did not connect to the MCP server "
    "{server} ({why})."
)
EXPIRED_WHY = "no sign-in before {until}"
NO_ONE = (
    "Error: {name} (entry {index}) failed: the MCP server {server} acts as the person who "
    "asks, and no person's message is being answered (or no one can be asked to sign in); "
    "it was not called"
)
CANNOT_START = (
    "Error: {name} (entry {index}) failed: it acts as the person who asks, and a sign-in to "
    "the MCP server {server} could not be started ({why}); it was not called"
)
REQUESTED_PREFIX, OUTCOME_PREFIX = "Sign-in requested: ", "Sign-in of "
_REQUESTED = re.compile(
    r"^Sign-in requested: (?P<name>\S+) \(entry (?P<index>\d+)\) waits for "
    r"<@(?P<user>[A-Z0-9]+)> to connect to the MCP server (?P<server>\S+) until "
    r"(?P<until>\S+)\.$"
)
_OUTCOME = re.compile(
    r"^Sign-in of (?P<name>\S+) \(entry (?P<index>\d+)\): <@(?P<user>[A-Z0-9]+)> "
    r"(?P<outcome>connected|did not connect) to (?P<server>\S+) at (?P<at>\S+?)"
    r"(?:: (?P<why>.*))?\.$",
    re.DOTALL,
)
_TIME = "%Y-%m-%dT%H:%M:%SZ"


class SignInNeeded(Exception):
    """A call of an `auth: user` server, for a person not connected to it (never, revoked,
    a refresh refused): they are asked to connect, and the call is made once they do."""

    def __init__(self, server: str, scope: str | None = None) -> None:
        super().__init__(f"a sign-in to {server} is needed")
        self.server = server
        self.scope = scope  # a step-up's: more scope than the person's token has


class SignInPending(ApprovalPending):
    """The run stopped while a person is asked to connect (a wait for a person, as an
    approval's): tried again at the expiry, or at once after the callback."""


class Begin(Protocol):
    """`assistant.mcp.signin.tokens.SignIns.begin`: the authorize URL of a new sign-in."""

    def __call__(
        self,
        server: str,
        team: str,
        user: str,
        key: ThreadKey,
        index: int,
        until: datetime,
        scope: str | None = None,
    ) -> Awaitable[str]: ...


@dataclass(frozen=True)
class WaitingSignIn:
    name: str
    index: int
    user: str
    server: str
    until: datetime
    outcome: str | None = None  # "connected", "did not connect"
    why: str = ""

    def expired(self, now: datetime) -> bool:
        return self.outcome is None and now >= self.until


def waiting_sign_in(entries: Sequence[Entry]) -> WaitingSignIn | None:
    """The call of the log that waits for a person's sign-in (or has its outcome and no
    result yet), if any; a stop ends the wait."""
    found: WaitingSignIn | None = None
    for entry in entries:
        if not isinstance(entry, SystemEntry):
            continue
        text = entry.content
        if (match := _REQUESTED.match(text)) is not None:
            found = WaitingSignIn(
                match["name"],
                int(match["index"]),
                match["user"],
                match["server"],
                datetime.strptime(match["until"], _TIME).replace(tzinfo=UTC),
            )
        elif found is None:
            continue
        elif (match := _OUTCOME.match(text)) is not None and int(match["index"]) == found.index:
            if found.outcome is None:
                found = WaitingSignIn(
                    found.name,
                    found.index,
                    found.user,
                    found.server,
                    found.until,
                    match["outcome"],
                    match["why"] or "",
                )
        elif text.startswith(STOP_PREFIX) or _is_result(text, found.name, found.index):
            found = None
    return found


def outcome_text(
    name: str, index: int, user: str, server: str, at: datetime, why: str | None
) -> str:
    """The entry the callback records: connected (`why` None), or not and why."""
    stamp = format_timestamp(at)
    if why is None:
        return CONNECTED.format(name=name, index=index, user=user, server=server, at=stamp)
    why = " ".join(why.split())[:200].rstrip(".")
    return NOT_CONNECTED.format(name=name, index=index, user=user, server=server, at=stamp, why=why)


def _is_result(text: str, name: str, index: int) -> bool:
    return any(text.startswith(r.format(name=name, index=index)) for r in RESULT_PREFIXES)


@dataclass(frozen=True)
class SignInWaits:
    """A run's sign-ins. `begin`: None where no server signs people in (the call is an
    error the model reads); replays have no Slack client and ask no one."""

    recorder: Recorder
    begin: Begin | None
    seconds: float = 900.0  # ASSISTANT_APPROVAL_SECONDS: a sign-in waits as an approval does

    async def ask(
        self,
        ctx: RunContext,
        call: ServerToolCall,
        index: int,
        server: str,
        scope: str | None = None,
    ) -> str:
        """Ask the person answered to connect (an ephemeral **Connect** link), record that
        the call waits, and stop the run (SignInPending). Returns a result only when no one
        can be asked."""
        if ctx.asker is None or ctx.client is None or self.begin is None:
            return NO_ONE.format(name=call.called, index=index, server=server)
        until = datetime.now(UTC) + timedelta(seconds=self.seconds)
        until = until.replace(microsecond=0)
        try:
            url = await self.begin(
                server, ctx.key.team, ctx.asker, ctx.key, index, until, scope=scope
            )
        except ValueError as exc:  # the server's sign-in cannot start: the model reads why
            log.warning("no sign-in to %s could be started: %s", server, exc)
            return CANNOT_START.format(name=call.called, index=index, server=server, why=exc)
        await self._defer(ctx, until)  # before the person has the link: the callback's wins
        ensure_lease()
        entry = await self.recorder.record(
            ctx.key,
            REQUESTED.format(
                name=call.called,
                index=index,
                user=ctx.asker,
                server=server,
                until=format_timestamp(until),
            ),
        )
        words = ctx.words
        text = words.gettext(
            "{tool} acts as you on {server}: connect your account to go on.",
            tool=call.called,
            server=server,
        )
        blocks: list[dict[str, Any]] = [
            {"type": "section", "text": {"type": "mrkdwn", "text": text}},
            {
                "type": "actions",
                "elements": [
                    {
                        "type": "button",
                        "action_id": CONNECT,
                        "style": "primary",
                        "text": {
                            "type": "plain_text",
                            "text": words.gettext("Connect {server}", server=server)[:75],
                        },
                        "url": url,
                    }
                ],
            },
        ]
        try:
            await ctx.client.chat_postEphemeral(
                channel=ctx.key.channel,
                user=ctx.asker,
                thread_ts=ctx.key.thread_ts,
                text=text,
                blocks=blocks,
            )
        except SLACK_FAILURES as exc:
            log.warning("could not show %s the Connect link: %s", ctx.asker, slack_reason(exc))
        if ctx.cards is not None:
            if entry is not None:
                await ctx.cards.note(entry)
            await ctx.cards.close()
        raise _suspended(until)

    async def settle(self, ctx: RunContext) -> None:
        """A call the log shows waiting for a sign-in: made once the person connected (as
        them), a result the model reads once they did not or the wait expired; else the run
        waits on."""
        waiting = waiting_sign_in(ctx.log.entries)
        if waiting is None or ctx.client is None or ctx.toolbox is None:
            return  # nothing waits, or a replay: the recorded wait is not this run's to end
        now = datetime.now(UTC)
        if waiting.outcome is None and not waiting.expired(now):
            await self._defer(ctx, waiting.until)
            for new in await self.recorder.entries(ctx.key, start=len(ctx.log)):
                ctx.log.add(new)
            waiting = waiting_sign_in(ctx.log.entries)
            if waiting is None:
                return
            if waiting.outcome is None:
                raise _suspended(waiting.until)
        call = ctx.log.entries[waiting.index].content
        result: str | None
        stand_in = f"{waiting.server}__{STAND_IN}"
        if waiting.outcome == "connected" and isinstance(call, ServerToolCall):
            if call.called == stand_in and stand_in not in ctx.toolbox.server_tools:
                result = CONNECTED_RESULT.format(
                    name=call.called, index=waiting.index, user=waiting.user, server=waiting.server
                )
            else:  # as them; refused at once (revoked meanwhile): they are asked again
                result = await ctx.toolbox.approved(call, ctx, waiting.index)
        else:
            why = waiting.why or EXPIRED_WHY.format(until=format_timestamp(waiting.until))
            result = NOT_CARRIED_OUT.format(
                name=waiting.name,
                index=waiting.index,
                user=waiting.user,
                server=waiting.server,
                why=why,
            )
        if result is None:
            return
        ensure_lease()
        entry = await self.recorder.record(ctx.key, result)
        if entry is not None:
            ctx.log.add(entry)

    async def _defer(self, ctx: RunContext, until: datetime) -> None:
        store = self.recorder.store
        await async_store(store).write(store.defer, ctx.key, None, until)


def _suspended(until: datetime) -> SignInPending:
    wait = max((until - datetime.now(UTC)).total_seconds(), 0.0)
    return SignInPending(f"a tool call waits for a person to connect until {until}", wait)
