"""The store interface: where context logs live between steps, runs and processes
(docs/architecture.md#storage).

One small Protocol per concern over the values of `context.storage.values` (`LogStore`,
`RunStore`, `MessageCopies`, `ImageStore`, `PanelStore`, `ChannelStore`, `Housekeeping`,
`StopStore`); `Store` is all of them, for code that uses the whole store. Code that needs one
concern can ask for its Protocol alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any, Protocol

from context.channels import ChannelConfig
from context.entry import Content, Entry, UserContent
from context.storage.values import (
    EntryMeta,
    ImageRef,
    OpenStream,
    PanelThread,
    Pending,
    StopRequest,
    ThreadKey,
    ThreadMessage,
    ThreadSummary,
    UsageRow,
    Viewing,
    Vote,
)


class LogStore(Protocol):
    """The context log: entries placed and recorded, and read back."""

    def append(
        self,
        key: ThreadKey,
        content: Content,
        timestamp: str,
        meta: EntryMeta | None = None,
        expect_index: int | None = None,
        answered_through: int | None = None,
        images: Sequence[ImageRef] = (),
    ) -> Entry | None:
        """Atomically place (index and turn by `context.log.Tail`) and record one entry, with
        the images it refers to;
        with `answered_through`, in the same transaction, raise the thread's answered_through
        to it (the entry that ends a run, and what the run answered, are one fact).

        Returns None, recording nothing, when `meta.event_id` is already recorded in this
        thread, when `content` is a user message whose `meta.slack_ts` is already recorded
        as a user entry in this thread (Slack sends a channel mention twice), or when
        `expect_index` is given and the entry would not get that index.
        """
        ...

    def record_message(
        self,
        key: ThreadKey,
        content: UserContent,
        timestamp: str,
        meta: EntryMeta,
        instructions: tuple[str, str],
        copy: ThreadMessage,
        images: Sequence[ImageRef] = (),
    ) -> list[Entry]:
        """A person's message and what goes with it, in one transaction (an event is
        acknowledged after this one write): entry 0 from `instructions` (text, timestamp) if
        the thread has no entry yet, the user entry with its images, and the thread's copy
        of the message. The entries recorded; [] when the message already was (as `append`
        drops duplicates)."""
        ...

    def entries(self, key: ThreadKey, start: int = 0) -> list[Entry]:
        """The thread's entries with index >= start, in order; [] for an unknown thread."""
        ...

    def set_usage(self, key: ThreadKey, index: int, meta: EntryMeta) -> None:
        """Put a model call's figures (model, tokens, latency) in the side metadata of entry
        `index`, recorded before the call's answer was complete (a streamed answer's usage
        comes last)."""
        ...

    def has_thread(self, key: ThreadKey) -> bool: ...

    def has_message(self, key: ThreadKey, slack_ts: str) -> bool:
        """Whether the Slack message `slack_ts` is recorded as a user entry of the thread."""
        ...


class RunStore(Protocol):
    """Runs: one process at a time per thread, and what is still owed an answer."""

    def claim(self, key: ThreadKey, holder: str, seconds: float) -> bool:
        """Take or renew the thread's run lease for `seconds`: True when `holder` now holds
        it (it was free, expired, or already its own)."""
        ...

    def release(self, key: ThreadKey, holder: str) -> bool:
        """Give the lease back, if `holder` has it; whether the thread is still owed an
        answer (read in the same write, so nothing recorded before it is missed)."""
        ...

    def pending(self, key: ThreadKey) -> list[Pending]:
        """User entries that want an answer, after the thread's answered_through."""
        ...

    def waiting_threads(self) -> list[ThreadKey]:
        """Threads owed an answer, or with open streams (`open_streams`), whose lease is
        free or expired (a crashed run's), and whose deferral, if any, is due (`defer`)."""
        ...

    def deferred_since(self, key: ThreadKey) -> datetime | None:
        """When the thread's run was first deferred (`defer`), if it is now."""
        ...

    def defer(self, key: ThreadKey, since: datetime, retry_at: datetime) -> None:
        """The thread's run stopped on a fault that may pass (Slack unavailable): keep when
        the deferral began and when it is due; the entry that ends a run clears both."""
        ...

    def mark_posted(
        self, key: ThreadKey, index: int, slack_ts: str, messages: Sequence[ThreadMessage] = ()
    ) -> None:
        """Note in the side metadata that entry `index` (a postMessage) reached Slack as the
        message `slack_ts` (its last, when split), keep copies of the `messages` it became
        (see `remember_messages`), and forget them as open streams (streamed, they are
        finished now), in one write."""
        ...

    def set_open_streams(self, key: ThreadKey, streams: Sequence[str]) -> None:
        """Replace the thread's open streams with these (ts of streams being streamed)."""
        ...

    def change_open_streams(
        self, key: ThreadKey, add: Sequence[OpenStream] = (), remove: Sequence[OpenStream] = ()
    ) -> None:
        """Forget `remove` and note `add` among the thread's open streams, in one write:
        what a run resumed after a crash, or a sweep, finds (`open_streams`)."""
        ...

    def open_streams(self, key: ThreadKey) -> list[OpenStream]:
        """The Slack messages of the thread not yet confirmed finished or gone, in order."""
        ...


class MessageCopies(Protocol):
    """Copies of a thread's Slack messages, so that getThreadHistory need not ask Slack
    again; not part of the log."""

    def remember_messages(
        self, key: ThreadKey, messages: list[ThreadMessage], complete: bool = False
    ) -> None:
        """Keep (or update, by ts) copies of a known thread's Slack messages; `complete`
        says the copies now hold the whole thread. Does nothing for an unknown thread."""
        ...

    def forget_message(self, key: ThreadKey, ts: str) -> None: ...

    def thread_messages(self, key: ThreadKey) -> tuple[list[ThreadMessage], bool]:
        """The copies, oldest first, and whether they hold the whole thread."""
        ...


class ImageStore(Protocol):
    """The images user entries refer to (recorded with their entries by `LogStore`)."""

    def recent_images(self, key: ThreadKey, limit: int) -> list[tuple[int, ImageRef]]:
        """The thread's `limit` newest images with their entries' indexes, oldest first."""
        ...


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
        instructions: tuple[str, str],
    ) -> list[Entry]:
        """The panel of a thread was opened, or shows another context: in one transaction,
        entry 0 from `instructions` (text, timestamp) if the thread has no entry yet, the
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
        self, key: ThreadKey, user: str, version: int, content: str, instructions: tuple[str, str]
    ) -> list[Entry]:
        """In one transaction, the system entry `content` in `key` (entry 0 first from
        `instructions` in a new thread), and change `version` of what `user` views in the
        thread's DM marked recorded; [] when it is recorded already or is not the latest."""
        ...


class ChannelStore(Protocol):
    """Channel settings (`context.channels`): per channel of a workspace, and its default."""

    def channel_config(self, team: str, channel: str) -> ChannelConfig | None:
        """The settings kept for the channel (`"*"`: the workspace's default), None if none."""
        ...

    def channel_configs(self, team: str | None = None) -> list[ChannelConfig]:
        """Every channel's kept settings (only `team`'s when given), by team then channel."""
        ...

    def set_channel_config(self, config: ChannelConfig) -> ChannelConfig:
        """Keep `config` as its channel's settings, replacing what was kept, in one write;
        what was kept (stamped with `updated_at`)."""
        ...


class Housekeeping(Protocol):
    """What operators read and delete: thread listings, side metadata, purges."""

    def threads(
        self, channel: str | None = None, updated_since: datetime | None = None
    ) -> list[ThreadSummary]:
        """Every thread, most recently updated first, with token totals and vote counts;
        only those of `channel`, and only those updated at or after `updated_since`, when
        given."""
        ...

    def purge(self, updated_before: datetime, dry_run: bool = False) -> list[ThreadKey]:
        """Delete every thread last updated before `updated_before` (its entries, metadata
        and remembered messages) and return their keys, oldest first; with `dry_run`, only
        return them."""
        ...

    def started_at(self, key: ThreadKey) -> str | None:
        """When the thread's log was started (microseconds, UTC), None when there is none:
        a log purged and started again under the same key has another."""
        ...

    def metadata(self, key: ThreadKey, start: int = 0) -> list[EntryMeta]:
        """Side metadata of the thread's entries with index >= start, in index order."""
        ...

    def usage(
        self, by: str | None = None, since: datetime | None = None, until: datetime | None = None
    ) -> list[UsageRow]:
        """The model calls (their model and tokens) and the runs ended (answers) recorded at
        or after `since` and before `until`, summed in the database by model and by `by`:
        "workspace", "channel", "user" (the person asking), "day" (UTC) or "model"; None, one
        group. ValueError for another `by`."""
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


class Store(
    LogStore,
    RunStore,
    MessageCopies,
    ImageStore,
    PanelStore,
    ChannelStore,
    Housekeeping,
    StopStore,
    Protocol,
):
    """Every backend keeps these promises, across processes too."""

    def urgent(self) -> Store:
        """The same store, its writes served first when they queue (someone waits on them)."""
        ...

    def close(self) -> None: ...
