"""The Protocols of what Slack's own surfaces keep beside the log: the assistant panel and the
Messages tab (`PanelStore`), the channels' settings (`ChannelStore`) and the stop button
(`StopStore`). Part of `Store` (`context.storage.base`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any, Protocol

from context.channels import ChannelConfig
from context.entry import Entry
from context.storage.values import (
    Elicitation,
    EntryMeta,
    Grant,
    ModelRefusal,
    Opening,
    PanelThread,
    StopRequest,
    ThreadKey,
    Viewing,
    Vote,
)


class PanelStore(Protocol):
    """Side metadata of Slack's assistant panel and of feedback clicks, each written in the
    same transaction as the system entry that records it in the log."""

    def record_panel(
        self,
        key: ThreadKey,
        panel: PanelThread,
        content: str,
        timestamp: str,
        meta: EntryMeta,
        opening: Opening,
    ) -> list[Entry]:
        """The panel of a thread was opened, or shows another context: in one transaction,
        entry 0 from `opening` if the thread has no entry yet, the
        system entry `content`, and `panel`'s user and context kept as the thread's (its
        title stays). The entries recorded; [] when `meta.event_id` is recorded already."""
        ...

    def panel(self, key: ThreadKey) -> PanelThread | None:
        """The thread's panel side metadata; None for a thread not opened in the panel."""
        ...

    def claim_title(self, key: ThreadKey, title: str) -> bool:
        """Keep `title` as the panel thread's title if it has none yet: True when it was
        kept (then, and only then, the caller sets it in Slack)."""
        ...

    def record_session_title(
        self, key: ThreadKey, title: str, user: str, content: str, timestamp: str, meta: EntryMeta
    ) -> list[Entry]:
        """A person renamed the thread's agent session: in one transaction, the system entry
        `content` and `title` kept as the person's (replacing an earlier one). [] when
        `meta.event_id` is recorded already."""
        ...

    def session_title(self, key: ThreadKey) -> str | None:
        """The title a person gave the thread's session; None when nobody did."""
        ...

    def record_vote(
        self, key: ThreadKey, vote: Vote, content: str, timestamp: str, meta: EntryMeta
    ) -> Entry | None:
        """A feedback click: in one transaction, the system entry `content` and `vote` as the
        person's latest on that answer. None, recording nothing, when `meta.event_id` is
        recorded already or the person's latest vote on that answer is this one already.
        ValueError when the thread has no postMessage entry `vote.answer`."""
        ...

    def votes(self, key: ThreadKey) -> list[Vote]:
        """Each person's latest vote on each answer of the thread, by answer then person."""
        ...

    def claim_prompts(self, team: str, user: str, now: datetime, every: timedelta) -> bool:
        """Whether to show the person the Messages tab's prompts now: True, keeping `now`,
        unless they were shown less than `every` before it."""
        ...

    def keep_viewing(self, team: str, channel: str, user: str, entities: list[Any]) -> None:
        """What the person now views from their DM `channel` with the app; a change (not
        the same entities again) is a new version, owed to the log."""
        ...

    def viewing(self, team: str, channel: str, user: str) -> Viewing | None:
        """What the person views, while that change is not in a log yet; else None."""
        ...

    def record_viewing(
        self, key: ThreadKey, user: str, version: int, content: str, opening: Opening
    ) -> list[Entry]:
        """In one transaction, the system entry `content` in `key` (entry 0 first from
        `opening` in a new thread), and change `version` of what `user` views in the
        thread's DM marked recorded; [] when it is recorded already or is not the latest."""
        ...


class ChannelStore(Protocol):
    """Channel settings (`context.channels`): per channel of a workspace, and its default."""

    def channel_config(self, team: str, channel: str) -> ChannelConfig | None:
        """The settings kept for the channel (`"*"`: the workspace's default), None if none."""
        ...

    def channel_configs_in_force(
        self, team: str, channel: str
    ) -> tuple[ChannelConfig | None, ChannelConfig | None]:
        """The workspace's default and the channel's settings (each None if none), in one
        read: what applies there (`context.channels.merged`)."""
        ...

    def channel_configs(self, team: str | None = None) -> list[ChannelConfig]:
        """Every channel's kept settings (only `team`'s when given), by team then channel."""
        ...

    def set_channel_config(self, config: ChannelConfig) -> ChannelConfig:
        """Keep `config` as its channel's settings, replacing what was kept, in one write;
        what was kept (stamped with `updated_at`)."""
        ...

    def set_channel_configs(self, configs: Sequence[ChannelConfig]) -> list[ChannelConfig]:
        """`set_channel_config` for each of `configs`, all in one transaction: every one kept,
        or (the database failing part-way) none."""
        ...


class ModelRefusalStore(Protocol):
    """What the model service refused in each channel (a model it does not serve, or that
    the key may not use), for `assistant channels list`."""

    def refuse_model(self, refusal: ModelRefusal) -> None:
        """Keep that the model service refused a model in a channel (the latest refusal
        there replaces an earlier one)."""
        ...

    def model_served(self, team: str, channel: str, model: str) -> None:
        """The model service answered `model` in the channel: a refusal of it kept there is
        no longer true."""
        ...

    def model_refusals(self, team: str | None = None) -> list[ModelRefusal]:
        """The refusals kept (only `team`'s when given), by team then channel."""
        ...


class StopStore(Protocol):
    """The stop button of a thread's agent session: pressed in one process, seen by the
    process running the thread (docs/architecture.md#the-stop-button)."""

    def request_stop(
        self, key: ThreadKey, user: str, at: str, streams: tuple[str, ...]
    ) -> StopRequest | None:
        """Keep a stop of the run answering what the thread owes now; the request, or None
        when it changes nothing: a thread never seen, nothing owed, or a stop already
        pending. Pending until an entry raises answered_through to its `through`."""
        ...

    def stop_requested(self, key: ThreadKey) -> StopRequest | None:
        """The thread's pending stop, if any."""
        ...


class GrantStore(Protocol):
    """Standing approvals of MCP tools (docs/slack-features.md#grants): given from an
    approval's buttons, read before a call would ask, listed and revoked by the editors."""

    def give_grant(
        self,
        team: str,
        channel: str,
        server: str,
        tool: str,
        user: str | None,
        granted_by: str,
        thread_ts: str,
    ) -> Grant:
        """Keep a grant: `user` alone may call the tool without asking, or (None) everyone in
        the channel. Returns it with its id."""
        ...

    def grant_covering(
        self, team: str, channel: str, server: str, tool: str, user: str
    ) -> Grant | None:
        """The unrevoked grant that lets `user` call the tool in the channel without asking
        (their own before everyone's, then the oldest); None when none does."""
        ...

    def grants(self, team: str, channel: str | None = None, revoked: bool = False) -> list[Grant]:
        """The workspace's grants (of one channel if given), oldest first; revoked ones too
        when `revoked`."""
        ...

    def revoke_grant(self, team: str, grant_id: int, by: str) -> Grant | None:
        """Revoke a grant of the workspace: the grant as revoked; None when the workspace has
        no such grant in force (none by that id, or revoked already)."""
        ...


class ElicitationStore(Protocol):
    """Questions MCP servers ask a person during a call
    (docs/slack-features.md#questions-from-tools): asked by the run, answered from the form in
    any process, read by the run that waits."""

    def ask_person(self, key: ThreadKey, asker: str, question_json: str) -> Elicitation:
        """Keep a question to `asker` in the thread; returns it with its id."""
        ...

    def elicitation(self, team: str, elicitation_id: int) -> Elicitation | None:
        """The workspace's question by its id, answered or not; None when there is none."""
        ...

    def answer_elicitation(
        self, team: str, elicitation_id: int, action: str, content_json: str | None, by: str
    ) -> Elicitation | None:
        """Answer a question once: the question as answered; None when it has no such
        question still unanswered."""
        ...
