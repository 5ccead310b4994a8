"""The values the store keeps and returns: thread keys, side metadata, copies, images, runs' owed
entries, summaries, the panel's threads and votes. Plain frozen dataclasses, no I/O."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any


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
class ModelRefusal:
    """The model service refused `model`, asked for in `channel` of `team`, at `at`: `what`
    says how (its HTTP status and error code)."""

    team: str
    channel: str
    model: str
    what: str
    at: str


@dataclass(frozen=True)
class Grant:
    """A standing approval (docs/slack-features.md#grants): calls of `server`'s `tool` in
    `channel` of `team` run without asking, for `user` alone, or for everyone in the channel
    when `user` is None. Given by `granted_by` in the thread `thread_ts`, whose log records it;
    revoked when `revoked_at` is set (kept, for the audit)."""

    id: int
    team: str
    channel: str
    server: str
    tool: str
    user: str | None
    granted_by: str
    granted_at: str
    thread_ts: str
    revoked_by: str | None = None
    revoked_at: str | None = None

    @property
    def qualified(self) -> str:
        """The tool as the model calls it (`SERVER__TOOL`)."""
        return f"{self.server}__{self.tool}"


@dataclass(frozen=True)
class Opening:
    """Entry 0 of a thread a write may start: `persona` gives its text, asked for only when
    the thread turns out to be new (the deployment's persona is a file read then, not on every
    message), and `timestamp` is its time."""

    persona: Callable[[], str]
    timestamp: str
    # The channel's memory entry right after the persona, within this many tokens
    # (ASSISTANT_MEMORY_TOKENS; docs/log-format.md#channel-memory); None: no memory entry.
    memory_tokens: int | None = None


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
    # A user entry that asked the bot itself (a mention, a DM, the shortcut), not a follow-up
    # owed an answer without a mention: a run that would end without answering it ends in an
    # apology instead (migration 0017_addressed).
    addressed: bool = False
    # OpenTelemetry (assistant/telemetry/): the W3C `traceparent` of the span that recorded the
    # entry (the event's, a tool call's), so that a run or a feedback click in another process
    # can link to it; None when telemetry is off.
    trace_context: str | None = None
    # Slack's short-lived `action_token` of a person's message (`event.assistant_thread`): what
    # a run answering it searches Slack with, as that person. A secret: never printed (`shown`).
    action_token: str | None = field(default=None, repr=False)

    def shown(self) -> dict[str, object]:
        """The fields a trace or an export may print: all but the secret ones."""
        return {k: v for k, v in asdict(self).items() if k not in SECRET_META}


# EntryMeta's fields no trace, export or report prints.
SECRET_META = frozenset({"action_token"})


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
    trace_context: str | None = None
    action_token: str | None = field(default=None, repr=False)  # EntryMeta's, never printed
    addressed: bool = False  # EntryMeta's


@dataclass(frozen=True)
class StopRequest:
    """A person pressed the stop button of a thread's agent session (docs/architecture.md#stop):
    the run answering the entries through `through` stops; they count as answered."""

    user: str  # the Slack user id of who pressed it
    at: str  # the event's Slack ts: when
    streams: tuple[str, ...]  # the streaming messages Slack stopped (kept as they are)
    through: int  # the last entry owed an answer when it was pressed


@dataclass(frozen=True)
class OpenStream:
    """A Slack message a thread's run streams, or may have started, that Slack has not
    confirmed finished or gone (docs/architecture.md#streamed-answers).

    `state`: "open", being streamed (or its process died); "starting", `chat.startStream` was
    asked and its answer is not known, `ts` then being a Slack ts that the message, if Slack
    made it, comes after; "owed", it could not be stopped or deleted and stays to be deleted.
    """

    ts: str
    state: str = "open"

    def token(self) -> str:
        return _STREAM_MARKS[self.state] + self.ts

    @classmethod
    def parse(cls, token: str) -> OpenStream:
        for state, mark in _STREAM_MARKS.items():
            if mark and token.startswith(mark):
                return cls(token[1:], state)
        return cls(token)


# How the store writes each state of an `OpenStream` (a mark before its ts).
_STREAM_MARKS = {"open": "", "starting": "?", "owed": "!"}


@dataclass(frozen=True)
class ThreadSummary:
    key: ThreadKey
    entries: int
    created_at: str
    updated_at: str
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0
    good_votes: int = 0  # feedback: the people's latest votes on the thread's answers
    bad_votes: int = 0


@dataclass(frozen=True)
class UsageRow:
    """Model calls and answers of one group of `Housekeeping.usage` by one model: `group` is
    the grouping's values (`(team,)`, `(team, channel)`, `(person,)`, `(day,)`; `()` for the
    whole window and by model), `model` None for rows of answers alone (no call's figures)."""

    group: tuple[str | None, ...]
    model: str | None
    calls: int
    input_tokens: int  # the prompt's, the cached ones included (as OpenAI counts them)
    cached_tokens: int
    output_tokens: int
    answers: int
    # Of `calls`, those a live judge made (ASSISTANT_JUDGE_SAMPLE): a row is either the
    # answers' calls or the judge's.
    judge_calls: int = 0


@dataclass(frozen=True)
class PanelThread:
    """A thread opened in Slack's assistant panel: who opened it, the context Slack last sent
    (`channel_id`, `team_id`, `enterprise_id`: what they are viewing) and the title set."""

    user: str
    context: dict[str, str]
    title: str | None = None


@dataclass(frozen=True)
class Viewing:
    """What a person is viewing in Slack, as the latest `app_context_changed` said
    (its `entities`, most relevant first), and the number of that change."""

    entities: list[dict[str, Any]]
    version: int


@dataclass(frozen=True, order=True)
class Vote:
    """One person's latest feedback on one answer (the index of its postMessage entry)."""

    answer: int
    user: str
    vote: str  # "good" or "bad"


@dataclass(frozen=True)
class EvalRunRow:
    """An eval run kept in the store: its id, when it began, what it ran (`label`) and its
    manifest (the JSON of a saved run's manifest.json), None until the run ended."""

    id: int
    created_at: str
    label: str
    manifest: str | None


@dataclass(frozen=True)
class JudgeCall:
    """What a live judge said of an answer (`verdict` None: it could not judge, `reason`
    says why) and what its model call used (None: not known)."""

    verdict: str | None
    reason: str
    latency_ms: float | None = None
    prompt_tokens: int | None = None
    cached_tokens: int | None = None
    completion_tokens: int | None = None


@dataclass(frozen=True)
class VerdictCount:
    """How many answers of a channel, answered by `model`, a judge gave `verdict` (None: no
    verdict: the judge failed, or is still at it)."""

    team: str
    channel: str
    model: str | None
    judge_model: str
    verdict: str | None
    count: int


@dataclass(frozen=True)
class VerdictRow:
    """One answer judged: the thread, the index of its post, and what the judge said."""

    key: ThreadKey
    answer: int
    judged_at: str
    model: str | None
    judge_model: str
    verdict: str | None
    reason: str | None


@dataclass(frozen=True)
class Routine:
    """A routine's row (`RoutineStore`). Times are `now`-style UTC strings; `next_due` is None
    once a one-time routine ran; `cron` (with `tz`) or `at`, one or the other; `creator` None
    for one an operator added from the command line."""

    id: int
    team: str
    channel: str
    prompt: str
    creator: str | None
    cron: str | None
    tz: str | None
    at: str | None
    next_due: str | None
    paused: bool = False
    paused_reason: str | None = None
    last_run_at: str | None = None
    last_thread_ts: str | None = None
    last_outcome: str | None = None
    failures: int = 0
    created_at: str = ""


@dataclass(frozen=True)
class Elicitation:
    """A question an MCP server asked `asker` during a call of the thread's run
    (docs/slack-features.md#questions-from-tools); `question_json` says what was asked.
    Answered once `action` is set ("accept", "decline" or "cancel"), by `answered_by`, with
    `content_json` (the form's values, for an accepted form)."""

    id: int
    team: str
    channel: str
    thread_ts: str
    asker: str
    question_json: str
    asked_at: str
    action: str | None = None
    content_json: str | None = None
    answered_by: str | None = None
    answered_at: str | None = None
