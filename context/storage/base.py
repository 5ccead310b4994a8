"""The store interface: where context logs live between steps, runs and processes
(docs/architecture.md#storage).

One small Protocol per concern over the values of `context.storage.values` (`LogStore`,
`RunStore`, `MessageCopies`, `ImageStore`, `PanelStore`, `ChannelStore`, `Housekeeping`,
`StopStore`, `SpendStore`, `McpConnectionStore`, `EvalRunStore`, `VerdictStore`, `RoutineStore`,
`MemoryStore`); `Store` is all of them, for code that uses the whole store. Code that needs one
concern can ask for its Protocol alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from sqlalchemy import Engine

from context.entry import Content, Entry, UserContent
from context.spend import BudgetReached, Hold, Period, PriorCost, Settlement, Unit, Warning80
from context.storage.base_eval import EvalRunStore as EvalRunStore
from context.storage.base_eval import VerdictStore as VerdictStore
from context.storage.base_mcp import McpConnectionStore as McpConnectionStore
from context.storage.base_memory import MemoryStore as MemoryStore
from context.storage.base_routines import RoutineStore as RoutineStore
from context.storage.base_slack import ChannelStore as ChannelStore
from context.storage.base_slack import ElicitationStore as ElicitationStore
from context.storage.base_slack import GrantStore as GrantStore
from context.storage.base_slack import ModelRefusalStore as ModelRefusalStore
from context.storage.base_slack import PanelStore as PanelStore
from context.storage.base_slack import StopStore as StopStore
from context.storage.values import (
    EntryMeta,
    ImageRef,
    Opening,
    OpenStream,
    Pending,
    ThreadKey,
    ThreadMessage,
    ThreadSummary,
    UsageRow,
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
        settle: Settlement | None = None,
    ) -> Entry | None:
        """Atomically place (index and turn by `context.log.Tail`) and record one entry, with
        the images it refers to; with `settle`, the model call whose usage `meta` carries
        settled in the same transaction (`Settlement.warnings` set once it commits);
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
        opening: Opening,
        copy: ThreadMessage,
        images: Sequence[ImageRef] = (),
    ) -> list[Entry]:
        """A person's message and what goes with it, in one transaction (an event is
        acknowledged after this one write): entry 0 from `opening` if the
        thread has no entry yet, the user entry with its images, and the thread's copy
        of the message. The entries recorded; [] when the message already was (as `append`
        drops duplicates)."""
        ...

    def entries(self, key: ThreadKey, start: int = 0) -> list[Entry]:
        """The thread's entries with index >= start, in order; [] for an unknown thread."""
        ...

    def set_usage(
        self, key: ThreadKey, index: int, meta: EntryMeta, settle: Settlement | None = None
    ) -> None:
        """Put a model call's figures (model, tokens, latency) in the side metadata of entry
        `index`, recorded before the call's answer was complete (a streamed answer's usage
        comes last); `settle`: the call's hold settled with them, in the same transaction
        (`Settlement.warnings` set once it commits)."""
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

    def trace_context(self, key: ThreadKey, index: int) -> str | None:
        """The `EntryMeta.trace_context` entry `index` was recorded with (None: none)."""
        ...

    def waiting_threads(self) -> list[ThreadKey]:
        """Threads owed an answer, or with open streams (`open_streams`), whose lease is
        free or expired (a crashed run's), and whose deferral, if any, is due (`defer`)."""
        ...

    def deferred_since(self, key: ThreadKey) -> datetime | None:
        """When the thread's run was first deferred (`defer`), if it is now."""
        ...

    def defer(self, key: ThreadKey, since: datetime | None, retry_at: datetime) -> None:
        """The thread's run stopped on a fault that may pass (Slack unavailable): keep when
        the deferral began and when it is due; the entry that ends a run clears both.
        `since` None: the run waits for a person (an approval), not for Slack: no outage
        has begun. A deferral due now wakes the workers (context/storage/wakeups.py)."""
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
        group. A live judge's calls are rows of their own (`UsageRow.judge_calls`). ValueError
        for another `by`."""
        ...


class SpendStore(Protocol):
    """Spend limits (docs/operations.md#spend-limits): what each channel's model calls spent
    and hold per UTC period, in micro-dollars or tokens; reserved atomically, across
    processes."""

    def reserve(
        self,
        team: str,
        channel: str,
        unit: Unit,
        amount: int,
        limits: Sequence[tuple[Period, int | None]],
        prior: PriorCost,
    ) -> Hold | BudgetReached:
        """Hold `amount` in each period of `limits` (a period's row opened, the first time,
        with what `prior` makes of the channel's calls recorded in it so far): all of
        them, or, where spent and held plus `amount` would pass a period's limit, none."""
        ...

    def settle(
        self, hold: Hold, used: int, limits: Sequence[tuple[Period, int | None]] = ()
    ) -> list[Warning80]:
        """The call's real usage counted, its hold released; the budgets of `limits` that
        passed 80% with it, each once per period."""
        ...

    def spend(
        self, team: str | None, periods: Sequence[str]
    ) -> list[tuple[str, str, str, str, int, int]]:
        """(team, channel, period, unit, spent, held) of the periods named, `team`'s only
        when given."""
        ...


class Store(
    LogStore,
    RunStore,
    MessageCopies,
    ImageStore,
    PanelStore,
    ChannelStore,
    ModelRefusalStore,
    GrantStore,
    ElicitationStore,
    Housekeeping,
    StopStore,
    SpendStore,
    McpConnectionStore,
    EvalRunStore,
    VerdictStore,
    RoutineStore,
    MemoryStore,
    Protocol,
):
    """Every backend keeps these promises, across processes too."""

    @property
    def local_reads(self) -> bool:
        """True when a read never waits on anything but this machine's CPU and a local
        file (SQLite in WAL mode: readers take no lock a writer holds): cheaper run where
        it is asked than handed to a thread. False for a database server (a read is a round
        trip that can hang)."""
        ...

    def urgent(self) -> Store:
        """The same store, its writes served first when they queue (someone waits on them)."""
        ...

    def oauth_engine(self) -> Engine:
        """The engine slack-sdk's installation and OAuth state stores use (same database,
        its writes taking the write lock first on SQLite): assistant/slack/installs.py."""
        ...

    def close(self) -> None: ...
