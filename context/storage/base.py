"""The store interface: where context logs live between steps, runs and processes
(docs/architecture.md#storage).

The values it keeps, and one small Protocol per concern (`LogStore`, `RunStore`,
`MessageCopies`, `ImageStore`, `Housekeeping`); `Store` is all of them, for code that uses
the whole store. Code that needs one concern can ask for its Protocol alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from context.entry import Content, Entry, UserContent


@dataclass(frozen=True, order=True)
class ThreadKey:
    """A Slack thread: the same channel and ts in two workspaces are two threads."""

    team: str
    channel: str
    thread_ts: str

    def __str__(self) -> str:
        return f"{self.team}/{self.channel}/{self.thread_ts}"

    @classmethod
    def parse(cls, text: str) -> ThreadKey:
        parts = text.split("/")
        if len(parts) != 3 or not all(parts):
            raise ValueError(f"thread id {text!r} is not of the form TEAM/CHANNEL/THREAD_TS")
        return cls(*parts)


@dataclass(frozen=True)
class EntryMeta:
    """Side metadata of an entry: kept beside its JSON, never part of the prompt."""

    slack_ts: str | None = None
    event_id: str | None = None
    model: str | None = None
    prompt_tokens: int | None = None
    cached_tokens: int | None = None
    completion_tokens: int | None = None
    latency_ms: float | None = None
    # A user entry someone expects an answer to (a mention, a DM, a follow-up): a run is owed
    # until the thread's answered_through reaches it, across restarts.
    wants_answer: bool = False


@dataclass(frozen=True)
class ThreadMessage:
    """A copy of one Slack message of a thread, for reading the thread back without asking
    Slack again. Not part of the log: it follows edits and deletions."""

    ts: str
    user: str
    text: str


@dataclass(frozen=True)
class ImageRef:
    """An image a user entry refers to: a Slack file, fetched again when a prompt shows it."""

    file_id: str
    name: str
    mimetype: str
    size: int
    url: str


@dataclass(frozen=True)
class Pending:
    """A user entry that wants an answer and has not had one, and its Slack message."""

    index: int
    slack_ts: str | None


@dataclass(frozen=True)
class ThreadSummary:
    key: ThreadKey
    entries: int
    created_at: str
    updated_at: str
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0


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

    def mark_answered(self, key: ThreadKey, through: int) -> None:
        """Raise the thread's answered_through to `through` (it never goes down)."""
        ...

    def pending(self, key: ThreadKey) -> list[Pending]:
        """User entries that want an answer, after the thread's answered_through."""
        ...

    def waiting_threads(self) -> list[ThreadKey]:
        """Threads owed an answer whose lease is free or expired (a crashed run's)."""
        ...

    def mark_posted(
        self, key: ThreadKey, index: int, slack_ts: str, messages: Sequence[ThreadMessage] = ()
    ) -> None:
        """Note in the side metadata that entry `index` (a postMessage) reached Slack as the
        message `slack_ts` (its last, when split), keep copies of the `messages` it became
        (see `remember_messages`), and forget the thread's open streams (they were its
        messages), in one write."""
        ...

    def set_open_streams(self, key: ThreadKey, streams: Sequence[str]) -> None:
        """The Slack messages (ts) the thread's run is streaming now and has not finished:
        a run resumed after a crash finds them (`open_streams`)."""
        ...

    def open_streams(self, key: ThreadKey) -> list[str]: ...


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


class Housekeeping(Protocol):
    """What operators read and delete: thread listings, side metadata, purges."""

    def threads(self) -> list[ThreadSummary]:
        """Every thread, most recently updated first, with token totals."""
        ...

    def purge(self, updated_before: datetime, dry_run: bool = False) -> list[ThreadKey]:
        """Delete every thread last updated before `updated_before` (its entries, metadata
        and remembered messages) and return their keys, oldest first; with `dry_run`, only
        return them."""
        ...

    def metadata(self, key: ThreadKey, start: int = 0) -> list[EntryMeta]:
        """Side metadata of the thread's entries with index >= start, in index order."""
        ...


class Store(LogStore, RunStore, MessageCopies, ImageStore, Housekeeping, Protocol):
    """Every backend keeps these promises, across processes too."""

    def urgent(self) -> Store:
        """The same store, its writes served before others' when they queue (for work that
        someone is waiting on)."""
        ...

    def close(self) -> None: ...
