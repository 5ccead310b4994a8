"""The store's tables (the schema the migrations build) and the helpers every repository uses
to find a thread's row and stamp a time."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    UniqueConstraint,
    bindparam,
    false,
    select,
)
from sqlalchemy.sql import ColumnElement

from context.storage.values import ThreadKey

metadata = MetaData()

threads_table = Table(
    "threads",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("team", String, nullable=False),
    Column("channel", String, nullable=False),
    Column("thread_ts", String, nullable=False),
    # Microsecond UTC text (see `now`): sorts as it reads, on every backend.
    Column("created_at", String, nullable=False),
    Column("updated_at", String, nullable=False),
    # The tail of the log, so that an append reads one row instead of every entry.
    Column("next_index", Integer, nullable=False, server_default="0"),
    Column("turn", Integer, nullable=False, server_default="0"),
    Column("last_speaker", String),
    # Whether thread_messages holds the whole Slack thread (fetched from Slack once).
    Column("history_complete", Boolean, nullable=False, server_default=false()),
    # Runs (migration 0003): entries up to this index are answered; the lease of the process
    # running the thread now, if any, and until when (a `now` string).
    Column("answered_through", Integer, nullable=False, server_default="-1"),
    Column("run_holder", String),
    Column("run_expires", String),
    # Streams (migration 0006): each Slack message the thread's runs streamed, or may have
    # started, that Slack has not confirmed finished (stopped and marked posted) or gone
    # (deleted), space-separated `OpenStream` tokens ("TS", "?TS", "!TS"); NULL when none.
    Column("open_streams", Text),
    # Deferrals (migration 0007): when the thread's run was first stopped by a Slack fault
    # that may pass, and when to try it again (`now` strings); NULL when none is under way.
    # Cleared by the entry that ends a run.
    Column("deferred_since", String),
    Column("retry_at", String),
    # Stops (migration 0011_stops): the stop button pressed on the run answering the entries
    # through stop_through; pending while stop_through > answered_through (the entry that
    # records the stop raises answered_through to it). Who pressed it, when (a Slack ts), and
    # the streaming messages Slack stopped (space-separated ts).
    Column("stop_through", Integer),
    Column("stop_user", String),
    Column("stop_at", String),
    Column("stop_streams", Text),
    UniqueConstraint("team", "channel", "thread_ts", name="uq_threads_key"),
)

thread_messages_table = Table(
    "thread_messages",
    metadata,
    Column(
        "thread_id",
        Integer,
        ForeignKey("threads.id", name="fk_thread_messages_thread"),
        nullable=False,
    ),
    Column("ts", String, nullable=False),
    Column("user", String, nullable=False),
    Column("text", Text, nullable=False),
    PrimaryKeyConstraint("thread_id", "ts", name="pk_thread_messages"),
)

entries_table = Table(
    "entries",
    metadata,
    Column(
        "thread_id", Integer, ForeignKey("threads.id", name="fk_entries_thread"), nullable=False
    ),
    Column("idx", Integer, nullable=False),
    Column("role", String, nullable=False),
    Column("turn", Integer, nullable=False),
    Column("timestamp", String, nullable=False),
    Column("content_json", Text, nullable=False),
    Column("slack_ts", String),
    Column("event_id", String),
    Column("model", String),
    Column("prompt_tokens", Integer),
    Column("cached_tokens", Integer),
    Column("completion_tokens", Integer),
    Column("latency_ms", Float),
    Column("recorded_at", String, nullable=False),
    Column("wants_answer", Boolean, nullable=False, server_default=false()),
    # Usage (migration 0009_usage): the Slack user id of the person the entry is by (a user
    # entry) or for (any other: the author of the thread's newest user entry when it was
    # recorded), and whether the entry ended a run (it was recorded with answered_through).
    Column("person", String),
    Column("ends_run", Boolean, nullable=False, server_default=false()),
    # Telemetry (migration 0013_trace_context): the entry's `EntryMeta.trace_context`.
    Column("trace_context", String),
    # Real-time search (migration 0015_action_tokens): the `EntryMeta.action_token` of a
    # person's message, for the run that answers it.
    Column("action_token", String),
    # Migration 0017_addressed: `EntryMeta.addressed`.
    Column("addressed", Boolean, nullable=False, server_default=false()),
    PrimaryKeyConstraint("thread_id", "idx", name="pk_entries"),
)
Index(
    "ix_entries_wants_answer",
    entries_table.c.thread_id,
    entries_table.c.idx,
    postgresql_where=entries_table.c.wants_answer,
    sqlite_where=entries_table.c.wants_answer,
)
Index(
    "ix_entries_thread_slack_ts",
    entries_table.c.thread_id,
    entries_table.c.slack_ts,
    postgresql_where=entries_table.c.slack_ts.isnot(None),
    sqlite_where=entries_table.c.slack_ts.isnot(None),
)
Index(
    "ux_entries_thread_event",
    entries_table.c.thread_id,
    entries_table.c.event_id,
    unique=True,
    postgresql_where=entries_table.c.event_id.isnot(None),
    sqlite_where=entries_table.c.event_id.isnot(None),
)

entry_images_table = Table(
    "entry_images",
    metadata,
    Column(
        "thread_id",
        Integer,
        ForeignKey("threads.id", name="fk_entry_images_thread"),
        nullable=False,
    ),
    Column("idx", Integer, nullable=False),
    Column("position", Integer, nullable=False),
    Column("file_id", String, nullable=False),
    Column("name", String, nullable=False),
    Column("mimetype", String, nullable=False),
    Column("size", Integer, nullable=False),
    Column("url", Text, nullable=False),
    PrimaryKeyConstraint("thread_id", "idx", "position", name="pk_entry_images"),
)


# The assistant panel (migration 0005): a thread opened in Slack's assistant split view, who
# opened it, the context Slack last sent (the channel they are viewing) and the title set.
panel_threads_table = Table(
    "panel_threads",
    metadata,
    Column(
        "thread_id",
        Integer,
        ForeignKey("threads.id", name="fk_panel_threads_thread"),
        primary_key=True,
    ),
    Column("user", String, nullable=False),
    Column("context_json", Text, nullable=False),
    Column("title", Text),
)

# Agent sessions (migration 0015): the title a person gave the thread's session in Slack
# (`agent_session_title_changed`), which the app never renames over; who, and when.
session_titles_table = Table(
    "session_titles",
    metadata,
    Column(
        "thread_id",
        Integer,
        ForeignKey("threads.id", name="fk_session_titles_thread"),
        primary_key=True,
    ),
    Column("title", Text, nullable=False),
    Column("user", String, nullable=False),
    Column("changed_at", String, nullable=False),
)

# Feedback buttons: each person's latest vote ("good" or "bad") on each answer (the index of
# its postMessage entry). The clicks themselves are system entries of the log.
feedback_votes_table = Table(
    "feedback_votes",
    metadata,
    Column(
        "thread_id",
        Integer,
        ForeignKey("threads.id", name="fk_feedback_votes_thread"),
        nullable=False,
    ),
    Column("answer_idx", Integer, nullable=False),
    Column("user", String, nullable=False),
    Column("vote", String, nullable=False),
    PrimaryKeyConstraint("thread_id", "answer_idx", "user", name="pk_feedback_votes"),
)


# The agent's Messages tab, per person (not per thread: migration 0008). When the suggested
# prompts were last shown to them, so that opening the tab again soon shows nothing new.
prompts_shown_table = Table(
    "prompts_shown",
    metadata,
    Column("team", String, nullable=False),
    Column("user", String, nullable=False),
    Column("shown_at", String, nullable=False),  # `moment` text
    PrimaryKeyConstraint("team", "user", name="pk_prompts_shown"),
)

# What a person is viewing (app_context_changed's entities, as JSON), per DM: `version` goes up
# with each change, `recorded` is the version last written into a thread's log.
viewing_table = Table(
    "viewing",
    metadata,
    Column("team", String, nullable=False),
    Column("channel", String, nullable=False),
    Column("user", String, nullable=False),
    Column("entities_json", Text, nullable=False),
    Column("version", Integer, nullable=False),
    Column("recorded", Integer, nullable=False),
    PrimaryKeyConstraint("team", "channel", "user", name="pk_viewing"),
)


# Channel settings (migration 0010_channels): one row per configured channel of a workspace,
# and one for the workspace's default (channel "*"); the settings as the JSON of
# `context.channels.ChannelConfig`, so a new setting needs no migration.
channel_settings_table = Table(
    "channel_settings",
    metadata,
    Column("team", String, nullable=False),
    Column("channel", String, nullable=False),
    Column("config_json", Text, nullable=False),
    Column("updated_at", String, nullable=False),
    PrimaryKeyConstraint("team", "channel", name="pk_channel_settings"),
)

# What the model service refused in each channel (`ChannelStore.refuse_model`), for
# `assistant channels list`; migration 0014_model_refusals.
model_refusals_table = Table(
    "model_refusals",
    metadata,
    Column("team", String, nullable=False),
    Column("channel", String, nullable=False),
    Column("model", String, nullable=False),
    Column("what", String, nullable=False),
    Column("at", String, nullable=False),
    PrimaryKeyConstraint("team", "channel", name="pk_model_refusals"),
)

# Standing approvals of MCP tools (`GrantStore`, docs/slack-features.md#grants); migration
# 0022_grants. `user` NULL: everyone in the channel. A revoked grant keeps its row (who gave and
# who revoked it, for the audit); the lookup reads the unrevoked ones of one channel and tool.
grants_table = Table(
    "approval_grants",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("team", String, nullable=False),
    Column("channel", String, nullable=False),
    Column("server", String, nullable=False),
    Column("tool", String, nullable=False),
    Column("user", String, nullable=True),
    Column("granted_by", String, nullable=False),
    Column("granted_at", String, nullable=False),
    Column("thread_ts", String, nullable=False),
    Column("revoked_by", String, nullable=True),
    Column("revoked_at", String, nullable=True),
    Index("ix_approval_grants_tool", "team", "channel", "server", "tool"),
)

# Per-person sign-in to MCP servers (migration 0021_mcp_connections;
# docs/configuration.md#signing-in-to-mcp-servers). Every secret is sealed (Fernet, the key
# ASSISTANT_SECRET_KEY) before it reaches a row: `sealed` columns hold ciphertext only.
# A person's tokens for one server of one workspace; `expires_at` and `scope` are not secret
# (the CLI lists them).
mcp_connections_table = Table(
    "mcp_connections",
    metadata,
    Column("team", String, nullable=False),
    Column("user_id", String, nullable=False),
    Column("server", String, nullable=False),
    Column("sealed", Text, nullable=False),
    Column("expires_at", String),
    Column("scope", String),
    Column("connected_at", String, nullable=False),
    PrimaryKeyConstraint("team", "user_id", "server", name="pk_mcp_connections"),
)

# A sign-in under way: the state's hash (the state itself lives only in the authorize URL),
# what it is bound to, and the PKCE verifier (sealed). Taken (deleted) by the callback that
# uses it: single use across processes.
mcp_sign_ins_table = Table(
    "mcp_sign_ins",
    metadata,
    Column("state_hash", String, primary_key=True),
    Column("team", String, nullable=False),
    Column("user_id", String, nullable=False),
    Column("server", String, nullable=False),
    Column("channel", String, nullable=False),
    Column("thread_ts", String, nullable=False),
    Column("entry_idx", Integer, nullable=False),
    Column("sealed", Text, nullable=False),
    Column("expires_at", String, nullable=False),
)

# The client registered with each server's authorization server (dynamic client
# registration, RFC 7591), kept per server and issuer: one registration serves everyone.
mcp_clients_table = Table(
    "mcp_clients",
    metadata,
    Column("server", String, nullable=False),
    Column("issuer", String, nullable=False),
    Column("sealed", Text, nullable=False),
    Column("registered_at", String, nullable=False),
    PrimaryKeyConstraint("server", "issuer", name="pk_mcp_clients"),
)

# Eval runs kept in the store (`assistant eval`, migration 0023_eval_runs): a run's row, its
# cases (each log as an eval set's log file holds it) and each configuration's results (a
# case's line as a saved run's results file holds it). `manifest` is written when the run
# ends: NULL while it runs, or for a run cut short. The JSON is the eval's own format
# (assistant/eval/runs.py); the store keeps it as text, never reads into it.
eval_runs_table = Table(
    "eval_runs",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("created_at", String, nullable=False),  # `moment` text
    Column("label", Text, nullable=False),  # the inputs, as `assistant eval runs` shows them
    Column("manifest", Text),
)

eval_run_logs_table = Table(
    "eval_run_logs",
    metadata,
    Column(
        "run_id",
        Integer,
        ForeignKey("eval_runs.id", name="fk_eval_run_logs_run"),
        nullable=False,
    ),
    Column("number", Integer, nullable=False),
    Column("document", Text, nullable=False),
    PrimaryKeyConstraint("run_id", "number", name="pk_eval_run_logs"),
)

eval_run_results_table = Table(
    "eval_run_results",
    metadata,
    Column(
        "run_id",
        Integer,
        ForeignKey("eval_runs.id", name="fk_eval_run_results_run"),
        nullable=False,
    ),
    Column("config", Integer, nullable=False),  # 1, or 2 for --against's
    Column("number", Integer, nullable=False),  # the case's place, from 1
    Column("result", Text, nullable=False),
    PrimaryKeyConstraint("run_id", "config", "number", name="pk_eval_run_results"),
)

# Live answers judged (ASSISTANT_JUDGE_SAMPLE, migration 0023_eval_runs): one row per answer
# (the index of its post), so that an answer is judged at most once however often a process
# restarts. A side record of the thread: the log and the prompt never read it. `verdict` is
# NULL when the judge could not be asked or gave no verdict (`reason` says why); the judge's
# call is counted in `assistant usage` from its tokens here.
judged_answers_table = Table(
    "judged_answers",
    metadata,
    Column(
        "thread_id",
        Integer,
        ForeignKey("threads.id", name="fk_judged_answers_thread"),
        nullable=False,
    ),
    Column("answer_idx", Integer, nullable=False),
    Column("judged_at", String, nullable=False),  # `moment` text
    Column("model", String),  # the model that answered
    Column("judge_model", String, nullable=False),
    Column("verdict", String),
    Column("reason", Text),
    Column("latency_ms", Integer),
    Column("prompt_tokens", Integer),
    Column("cached_tokens", Integer),
    Column("completion_tokens", Integer),
    PrimaryKeyConstraint("thread_id", "answer_idx", name="pk_judged_answers"),
)
# Routines (migration 0019_routines): a prompt answered in a channel on a schedule, a cron
# expression in an IANA zone or one ISO-8601 time (`context.storage.routines`). Times are `now`
# strings; next_due is NULL once a one-time routine ran. Each tick claims a routine by moving
# next_due on (an UPDATE that checks the old value), so the index on it finds the due ones.
routines_table = Table(
    "routines",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("team", String, nullable=False),
    Column("channel", String, nullable=False),
    Column("prompt", Text, nullable=False),
    Column("creator", String),
    Column("cron", String),
    Column("tz", String),
    Column("at", String),
    Column("next_due", String),
    Column("paused", Boolean, nullable=False, server_default=false()),
    Column("paused_reason", Text),
    Column("last_run_at", String),
    Column("last_thread_ts", String),
    Column("last_outcome", String),
    Column("failures", Integer, nullable=False, server_default="0"),
    Column("created_at", String, nullable=False),
)
Index("ix_routines_next_due", routines_table.c.next_due)
# What channels remember (context/memory.py; migration 0018_memory): one row per memory in
# force. `channel` is `*` for a workspace's; `source` the thread it came from (TEAM/CHANNEL/TS)
# or `cli`, `app home`, `import`.
memories_table = Table(
    "memories",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("team", String, nullable=False),
    Column("scope", String, nullable=False),
    Column("channel", String, nullable=False),
    Column("text", Text, nullable=False),
    Column("author", String, nullable=False),
    Column("created_at", String, nullable=False),
    Column("source", String, nullable=False),
    Index("ix_memories_channel", "team", "channel"),
)

# Every change of a memory, whoever made it (a thread's also has its entries): what operators
# audit (docs/operations.md#auditing-memory). Kept when the memory is gone.
memory_audit_table = Table(
    "memory_audit",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("team", String, nullable=False),
    Column("channel", String, nullable=False),
    Column("memory_id", Integer, nullable=False),
    Column("action", String, nullable=False),  # added, edited, forgotten
    Column("text", Text, nullable=False),  # the memory's text after the change (before, forgotten)
    Column("actor", String, nullable=False),  # U…, or cli
    Column("via", String, nullable=False),  # a thread's key, cli, app home, import
    Column("at", String, nullable=False),
    Index("ix_memory_audit_channel", "team", "channel"),
)

# Questions an MCP server asks a person during a call (`ElicitationStore`,
# docs/slack-features.md#questions-from-tools); migration 0024_elicitations. The run that asks
# makes the row and reads it until `action` is set; the form's submission (in any process)
# sets it once. `question_json`: what was asked (its fields), to build and check the form.
elicitations_table = Table(
    "elicitations",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("team", String, nullable=False),
    Column("channel", String, nullable=False),
    Column("thread_ts", String, nullable=False),
    Column("asker", String, nullable=False),
    Column("question_json", Text, nullable=False),
    Column("asked_at", String, nullable=False),
    Column("action", String, nullable=True),
    Column("content_json", Text, nullable=True),
    Column("answered_by", String, nullable=True),
    Column("answered_at", String, nullable=True),
)

# `is_thread` for statements built once (the hot ones: building a statement and its cache key
# costs more CPU than SQLite's answer), its values given by `thread_values(key)`. The names are
# not the columns': an UPDATE takes a parameter named as a column for its SET.
THREAD = (
    (threads_table.c.team == bindparam("key_team"))
    & (threads_table.c.channel == bindparam("key_channel"))
    & (threads_table.c.thread_ts == bindparam("key_thread_ts"))
)

THREAD_ID = select(threads_table.c.id).where(THREAD)


def thread_values(key: ThreadKey) -> dict[str, str]:
    """The parameters of `THREAD` for `key`."""
    return {"key_team": key.team, "key_channel": key.channel, "key_thread_ts": key.thread_ts}


def is_thread(key: ThreadKey) -> ColumnElement[bool]:
    """The condition on `threads_table` that selects the row of `key`."""
    return (
        (threads_table.c.team == key.team)
        & (threads_table.c.channel == key.channel)
        & (threads_table.c.thread_ts == key.thread_ts)
    )


def now() -> str:
    """Finer than the log's whole seconds, so that threads updated within one second still
    list in the order they were updated."""
    return moment(datetime.now(UTC))


MOMENT = "%Y-%m-%dT%H:%M:%S.%fZ"  # how a time `moment` wrote is read back (UTC)


def moment(at: datetime) -> str:
    """`at` as fixed-width UTC text (`0931-09-26T21:23:39.827522Z`), so that comparing two as
    text, as SQL does, compares the times; strftime's `%Y` writes year 931 as `931`, which
    sorts after 2025. Raises OverflowError when `at` in UTC falls outside years 1 to 9999."""
    utc = at.astimezone(UTC).replace(tzinfo=None)
    return utc.isoformat(timespec="microseconds") + "Z"


# Spend limits (`SpendStore`, migration 0020_budgets): per channel, UTC period ("2026-11-29",
# "2026-11") and unit ("usd" in micro-dollars, "tokens"), what the model calls spent and what
# calls under way hold (their worst case, until their usage is known); `warned`: the 80%
# notice was sent for this period. The limits themselves are channel settings.
spend_table = Table(
    "spend",
    metadata,
    Column("team", String, nullable=False),
    Column("channel", String, nullable=False),
    Column("period", String, nullable=False),
    Column("unit", String, nullable=False),
    Column("spent", BigInteger, nullable=False),
    Column("reserved", BigInteger, nullable=False),
    Column("warned", Boolean, nullable=False, server_default=false()),
    PrimaryKeyConstraint("team", "channel", "period", "unit", name="pk_spend"),
)
