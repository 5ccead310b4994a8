"""A click on an approval's buttons (docs/slack-features.md#approvals), in any process: checked
against the log (the call still waits, the clicker is the person who asked, the expiry has not
passed, the button showed the call's own arguments), recorded as an entry, and the thread
resumed at once: its deferral made due now, and this process's scheduler nudged (an ingress's
sweeping workers find it). "Always allow …" also gives a grant (docs/slack-features.md#grants),
for everyone in the channel only from one of its editors.

The decision entry is recorded with an event id of the call's own, so two clicks racing in
two processes record one decision. A refused click is an entry too, and its clicker is told;
the call still waits.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError
from slack_sdk.web.async_client import AsyncWebClient

from assistant.i18n.words import N_, Words
from assistant.intake.event_shapes import ClickPlace
from assistant.run.approvals.entries import (
    ALLOW_EVERYONE,
    ALLOW_ME,
    ALLOWING,
    DENY,
    REASON_BLOCK,
    Decision,
    Outcome,
    Pending,
    arguments_hash,
    arguments_refused_text,
    clean_reason,
    decided_text,
    deny_form,
    everyone_refused_text,
    grant_given_text,
    outcome_message,
    parse_button,
    pending_approval,
    refused_click_text,
    shown_deciders,
    stopped_request,
)
from assistant.run.channels.editors import workspace_role
from assistant.run.channels.languages import Languages
from assistant.run.core.recorder import Recorder
from assistant.run.scheduling.elsewhere import RunRequests
from assistant.slack.connection import SLACK_FAILURES, slack_reason
from context.storage import EntryMeta, Grant, ThreadKey
from context.storage.async_store import async_store
from context.toolcalls import ServerToolCall

log = logging.getLogger(__name__)

STOPPED = N_("This request was stopped.")


@dataclass(frozen=True)
class ApprovalButtons:
    recorder: Recorder  # the events' (its writes go first: Slack waits for the ack)
    runs: RunRequests  # this process's scheduler, or the workers elsewhere
    languages: Languages

    async def clicked(
        self,
        body: dict[str, Any],
        action: dict[str, Any],
        client: AsyncWebClient,
        form: bool = False,
        reason: str | None = None,
    ) -> None:
        """A `block_actions` payload of an approval's button; or (`form`) the Deny button's
        modal submitted, with its `reason`: checked again as a click."""
        value = parse_button(str(action.get("value", "")))
        person = _object(body.get("user"))
        container = _object(body.get("container"))
        channel = _object(body.get("channel")).get("id") or container.get("channel_id")
        team = _object(body.get("team")).get("id") or person.get("team_id")
        try:
            where = ClickPlace.model_validate(
                {
                    "team": team,
                    "channel": channel,
                    "thread_ts": value.thread_ts if value else None,
                    "user": person.get("id"),
                }
            )
        except ValidationError:
            where = None
        if value is None or where is None:
            log.warning("an approval click that names no call of its thread was ignored")
            return
        key = ThreadKey(where.team, value.channel, where.thread_ts)
        entries = await self.recorder.entries(key)
        pending = pending_approval(entries)
        if where.channel != key.channel and (pending is None or pending.posted_in != where.channel):
            # Only the thread's own channel, or the one its request was posted in.
            log.warning("an approval click from another channel than its request's was ignored")
            return
        # Told where they clicked: in the thread, or in the approvals channel.
        told = key if where.channel == key.channel else ThreadKey(key.team, where.channel, "")
        now = datetime.now(UTC)
        words = (await self.languages.of(client, key.team, where.user)).words
        if pending is None or pending.index != value.index or pending.decision is not None:
            if stopped_request(entries, value.index):
                await self._tell(client, told, where.user, words.gettext(STOPPED))
                return
            await self._tell(
                client,
                told,
                where.user,
                words.gettext("This request was already decided, or no longer waits."),
            )
            return
        store = self.recorder.store
        if await async_store(store).read(store.stop_requested, key) is not None:
            # Stopped, its entries not recorded yet: the run that records the stop says why
            # the call was not made.
            await self._tell(client, told, where.user, words.gettext(STOPPED))
            return
        if not await self._may_decide(client, key, where.user, pending):
            # One refusal per person per waiting call: a person clicking on and on fills
            # neither the log nor their screen.
            meta = EntryMeta(event_id=f"approval refused {pending.index} {where.user}")
            text = refused_click_text(pending, where.user, now)
            if await self.recorder.record(key, text, meta=meta) is None:
                log.info("a repeated click by %s on entry %d in %s", where.user, pending.index, key)
                return
            await self._tell(
                client,
                told,
                where.user,
                words.gettext(
                    "Only {who} can allow or deny this.",
                    who=(
                        f"<@{pending.requester}>"
                        if pending.approvers == "asker"
                        else shown_deciders(pending.approvers, words)
                    ),
                ),
            )
            return
        call = (await self.recorder.entries(key, start=pending.index))[0].content
        arguments = call.arguments if isinstance(call, ServerToolCall) else {}
        action_id = action.get("action_id")
        if await self._refused(
            client,
            key,
            told,
            where.user,
            pending,
            value.arguments_hash,
            action_id,
            arguments,
            words,
        ):
            return
        if pending.expired(now):
            await self._show(
                client,
                pending.posted_in or key.channel,
                pending.message_ts,
                pending.name,
                arguments,
                pending.requester,
                "expired",
                pending.until,
                words,
            )
            self._resume(key)  # the run records the expiry (its deferral is due already)
            return
        decision: Decision = "allowed" if action_id in ALLOWING else "denied"
        shown = str(action.get("value"))
        if (
            decision == "denied"
            and not form
            and await self._ask_reason(body, shown, pending, words, client)
        ):
            return  # decided once the form is sent (closed: nothing decided)
        entry = await self.recorder.record(
            key,
            decided_text(pending, decision, where.user, now, reason),
            meta=EntryMeta(event_id=f"approval {pending.index}"),  # one decision per call
        )
        if entry is None:
            log.info("a second decision on entry %d in %s was ignored", pending.index, key)
            return
        grants = action_id == ALLOW_EVERYONE or (
            action_id == ALLOW_ME and pending.approvers == "asker"  # "for me" is the asker's
        )
        grant: Grant | None = None
        if grants and isinstance(call, ServerToolCall):
            # Kept after the decision (recorded once per call), before the run resumes: the
            # log says the grant right where it was given, ahead of the call it allowed.
            grant = await async_store(store).write(
                store.give_grant,
                key.team,
                key.channel,
                call.server,
                call.tool,
                where.user if action_id == ALLOW_ME else None,
                where.user,
                key.thread_ts,
            )
            await self.recorder.record(key, grant_given_text(grant, pending.index))
            log.info("%s gave grant %d of %s in %s", where.user, grant.id, call.called, key)
        await async_store(store).write(store.defer, key, None, now)  # due now, in any process
        self._resume(key)
        await self._show(
            client,
            pending.posted_in or key.channel,
            pending.message_ts,
            pending.name,
            arguments,
            where.user,
            decision,
            now,
            words,
            grant,
        )

    async def _refused(
        self,
        client: AsyncWebClient,
        key: ThreadKey,
        told: ThreadKey,
        user: str,
        pending: Pending,
        shown: str | None,
        action_id: object,
        arguments: dict[str, Any],
        words: Words,
    ) -> bool:
        """Whether the click of the person who may decide is refused all the same (recorded,
        once per person and call, and they are told): its button showed other arguments than
        the call's, or it allows the tool for everyone and they edit no channel's settings."""
        now = datetime.now(UTC)
        if not _shows_the_call(shown, pending.arguments_hash, arguments):
            # A button of another message, or a forged one: never a decision on arguments
            # the person did not see.
            meta = EntryMeta(event_id=f"approval arguments refused {pending.index} {user}")
            text = arguments_refused_text(pending, user, now, shown)
            said = words.gettext(
                "This button showed other arguments than the call waiting here: nothing was "
                "decided."
            )
        elif (
            action_id == ALLOW_EVERYONE
            and not pending.expired(now)
            and await workspace_role(client, self.recorder.store, key.team, user) is None
        ):
            meta = EntryMeta(event_id=f"approval everyone refused {pending.index} {user}")
            text = everyone_refused_text(pending, user, now)
            said = words.gettext(
                "Only the channel's editors can allow this for everyone; the request still "
                "waits for your decision."
            )
        else:
            return False
        if await self.recorder.record(key, text, meta=meta) is not None:
            await self._tell(client, told, user, said)
        return True

    async def _may_decide(
        self, client: AsyncWebClient, key: ThreadKey, user: str, pending: Pending
    ) -> bool:
        """Whether `user` may decide on the call, by the MCP file's approvers of its tool
        (assistant/mcp/config.py): the person who asked, an editor of the workspace's channel
        settings, or a member of the user group (asked of Slack at each click: a member
        removed since may not). Slack failing: not known to be one, so no."""
        if pending.approvers == "editors":
            return await workspace_role(client, self.recorder.store, key.team, user) is not None
        if pending.approvers.startswith("usergroup:"):
            group = pending.approvers.removeprefix("usergroup:")
            try:
                answer = await client.usergroups_users_list(usergroup=group, team_id=key.team)
            except SLACK_FAILURES as exc:
                log.warning("cannot list user group %s: %s", group, slack_reason(exc))
                return False
            members = answer.get("users")
            return isinstance(members, list) and user in members
        return user == pending.requester

    async def submitted(
        self, body: dict[str, Any], view: dict[str, Any], client: AsyncWebClient
    ) -> None:
        """The Deny button's modal sent: a denial with the reason typed, if any, checked as
        its click was (the call may have been decided, stopped or expired since)."""
        value = view.get("private_metadata")
        button = parse_button(value) if isinstance(value, str) else None
        if button is None:
            log.warning("a denial's form that names no call was ignored")
            return
        state = _object(_object(view.get("state")).get("values"))
        typed = _object(_object(state.get(REASON_BLOCK)).get("value")).get("value")
        click = {**body, "channel": {"id": button.channel}, "container": {}}
        action = {"action_id": DENY, "value": value}
        await self.clicked(click, action, client, form=True, reason=clean_reason(typed))

    async def _ask_reason(
        self,
        body: dict[str, Any],
        value: str,
        pending: Pending,
        words: Words,
        client: AsyncWebClient,
    ) -> bool:
        """Open the Deny button's form for a reason; False when it cannot be opened (the
        click then denies at once, without a reason: the person's decision stands)."""
        trigger = body.get("trigger_id")
        if not isinstance(trigger, str) or not trigger:
            return False
        form = deny_form(value, pending.name, words)
        try:
            await client.views_open(trigger_id=trigger, view=form)
        except SLACK_FAILURES as exc:
            log.info("could not open the form for a denial's reason: %s", slack_reason(exc))
            return False
        return True

    def _resume(self, key: ThreadKey) -> None:
        self.runs.request(key)

    async def _show(
        self,
        client: AsyncWebClient,
        channel: str,
        ts: str | None,
        name: str,
        arguments: dict[str, Any],
        user: str,
        outcome: Outcome,
        at: datetime,
        words: Words,
        grant: Grant | None = None,
    ) -> None:
        """The buttons' message says who decided, or that it expired; no buttons left."""
        if ts is None:
            return
        text, blocks = outcome_message(name, arguments, user, outcome, at, words, grant)
        try:
            await client.chat_update(channel=channel, ts=ts, text=text, blocks=blocks)
        except SLACK_FAILURES as exc:
            log.warning(
                "could not update the approval message in %s: %s", channel, slack_reason(exc)
            )

    async def _tell(self, client: AsyncWebClient, key: ThreadKey, user: str, text: str) -> None:
        try:
            await client.chat_postEphemeral(
                channel=key.channel, user=user, text=text, thread_ts=key.thread_ts or None
            )
        except SLACK_FAILURES as exc:
            log.warning(
                "could not tell %s about their click in %s: %s", user, key, slack_reason(exc)
            )


def _shows_the_call(shown: str | None, asked: str | None, arguments: dict[str, Any]) -> bool:
    """Whether the clicked button showed the call's arguments: its hash is the one the
    request recorded and the call's own. A button and a log from before hashes (both None)
    still count; a log with a hash never takes a button without one."""
    if asked is None:
        return shown is None or shown == arguments_hash(arguments)
    return shown == asked == arguments_hash(arguments)


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
