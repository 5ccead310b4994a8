"""The store split by concern: each concern's Protocol, the repository that implements it, and
the whole `Store` that is all of them. Nothing checks Protocols at run time, so these do."""

from __future__ import annotations

import inspect
from itertools import combinations

import pytest

from context.entry import UserContent
from context.storage import (
    ChannelStore,
    ElicitationStore,
    EntryMeta,
    EvalRunStore,
    GrantStore,
    Housekeeping,
    ImageRef,
    ImageStore,
    LogStore,
    MemoryStore,
    MessageCopies,
    ModelRefusalStore,
    Opening,
    PanelStore,
    Pending,
    RoutineStore,
    RunStore,
    SpendStore,
    StopStore,
    Store,
    ThreadKey,
    ThreadMessage,
    VerdictStore,
    open_store,
)
from context.storage.base_mcp import McpConnectionStore
from context.storage.channels import SqlChannels
from context.storage.copies import SqlMessageCopies
from context.storage.elicitations import SqlElicitations
from context.storage.engine import Database
from context.storage.eval_runs import SqlEvalRuns
from context.storage.grants import SqlGrants
from context.storage.housekeeping import SqlHousekeeping
from context.storage.images import SqlImages
from context.storage.log import SqlLog
from context.storage.mcp_connections import SqlMcpConnections
from context.storage.memory import SqlMemory
from context.storage.model_refusals import SqlModelRefusals
from context.storage.panel import SqlPanel
from context.storage.routines import SqlRoutines
from context.storage.runs import SqlRuns
from context.storage.spend import SqlSpend
from context.storage.stops import SqlStops
from context.storage.store import SqlStore
from context.storage.verdicts import SqlVerdicts
from context.toolcalls import FinishRequest

TS = "2025-04-04T12:33:00Z"
KEY = ThreadKey("T1", "C1", "1712233980.000100")

CONCERNS = [
    (LogStore, SqlLog),
    (RunStore, SqlRuns),
    (MessageCopies, SqlMessageCopies),
    (ImageStore, SqlImages),
    (PanelStore, SqlPanel),
    (ChannelStore, SqlChannels),
    (ModelRefusalStore, SqlModelRefusals),
    (GrantStore, SqlGrants),
    (ElicitationStore, SqlElicitations),
    (Housekeeping, SqlHousekeeping),
    (StopStore, SqlStops),
    (McpConnectionStore, SqlMcpConnections),
    (EvalRunStore, SqlEvalRuns),
    (VerdictStore, SqlVerdicts),
    (RoutineStore, SqlRoutines),
    (SpendStore, SqlSpend),
    (MemoryStore, SqlMemory),
]


def methods(protocol: type) -> set[str]:
    """The methods a Protocol declares itself (not those it inherits, nor the `__init__`
    every Protocol is given)."""
    return {
        name
        for name, value in vars(protocol).items()
        if inspect.isfunction(value) and not name.startswith("__")
    }


def public_methods(cls: type) -> set[str]:
    return {
        name
        for name, value in vars(cls).items()
        if inspect.isfunction(value) and not name.startswith("_")
    }


def test_store_is_every_concern_and_no_method_is_in_two():
    for (one, _), (other, _) in combinations(CONCERNS, 2):
        assert not methods(one) & methods(other), (one.__name__, other.__name__)
    every = set().union(*(methods(protocol) for protocol, _ in CONCERNS))
    # oauth_engine: for slack-sdk's installation and state stores, not a concern of the log's.
    assert methods(Store) == {"urgent", "oauth_engine", "close"}
    assert all(protocol in Store.__mro__ for protocol, _ in CONCERNS)
    # The methods of the store before it was split, each now in exactly one concern.
    assert every == {
        "append", "record_message", "entries", "has_thread", "has_message",
        "claim", "release", "pending", "waiting_threads", "mark_posted",
        "remember_messages", "forget_message", "thread_messages",
        "recent_images",
        "threads", "purge", "metadata", "usage",
    } | {"record_panel", "panel", "claim_title", "record_vote", "votes"} | {
        "record_session_title", "session_title",  # a person's title of an agent session
    } | {
        "claim_prompts", "keep_viewing", "viewing", "record_viewing",  # the Messages tab
    } | {
        "set_usage", "set_open_streams", "open_streams", "change_open_streams",  # streamed answers
    } | {"started_at"} | {"defer", "deferred_since"} | {
        "channel_config", "channel_configs_in_force", "channel_configs", "set_channel_config",
        "set_channel_configs",  # `assistant channels import`, in one transaction
        "refuse_model", "model_served", "model_refusals",  # what the model service refused
        "request_stop", "stop_requested",  # the stop button
        "give_grant", "grant_covering", "grants", "revoke_grant",  # standing approvals
        "ask_person", "elicitation", "answer_elicitation",  # MCP servers' questions
        "trace_context",  # telemetry
    } | {
        "save_sign_in", "take_sign_in", "take_sign_ins", "sign_in_pending",  # MCP sign-ins
        "save_connection", "mcp_connection", "mcp_connections", "delete_connection",
        "save_mcp_client", "mcp_client",
    } | {
        "begin_eval_run", "add_eval_run_logs", "add_eval_run_results", "finish_eval_run",
        "eval_runs", "eval_run", "eval_run_logs", "eval_run_results", "eval_run_result",
        "delete_eval_run",  # eval runs kept with an id
    } | {"claim_judging", "record_verdict", "verdict_counts", "recent_verdicts"} | {
        "add_routine", "routine", "routines", "due_routines", "claim_routine", "routine_ran",
        "pause_routine", "resume_routine", "set_routine_due", "delete_routine",  # routines
    } | {"reserve", "settle", "spend"} | {  # spend limits
        "memories", "team_memories", "memory", "remember", "remember_all", "edit_memory",
        "forget", "memory_changes",  # channel memory
    }  # fmt: skip


@pytest.mark.parametrize(("protocol", "repository"), CONCERNS, ids=lambda c: c.__name__)
def test_each_repository_implements_exactly_its_concern(protocol: type, repository: type):
    assert public_methods(repository) == methods(protocol)
    for name in methods(protocol):
        promised = inspect.signature(getattr(protocol, name))
        kept = inspect.signature(getattr(repository, name))
        assert kept == promised, f"{repository.__name__}.{name}{kept} != {promised}"


def test_the_whole_store_offers_every_method_as_store_promises():
    store_methods = set().union(methods(Store), *(methods(p) for p, _ in CONCERNS))
    for name in store_methods:
        promised = inspect.signature(getattr(Store, name))
        kept = inspect.signature(getattr(SqlStore, name))
        assert kept.parameters == promised.parameters, name


def test_no_two_repositories_define_the_same_name():
    """The whole store inherits every repository: a name in two would hide one of them."""

    def names(cls: type) -> set[str]:
        return {name for name in vars(cls) if not (name.startswith("__") and name.endswith("__"))}

    for (_, one), (_, other) in combinations(CONCERNS, 2):
        assert not names(one) & names(other), (one.__name__, other.__name__)


def test_repositories_over_one_database_see_each_other_s_writes(store_url: str):
    database = Database.open(store_url)
    try:
        log, runs, copies = SqlLog(database), SqlRuns(database), SqlMessageCopies(database)
        images = SqlImages(database.served_first())
        picture = ImageRef("F1", "shot.png", "image/png", 10, "https://files/F1")
        log.record_message(
            KEY,
            UserContent(userid="<@U1>", text="look"),
            TS,
            EntryMeta(slack_ts="1712233981.000100", wants_answer=True),
            Opening(lambda: "persona", TS),
            ThreadMessage("1712233981.000100", "<@U1>", "look"),
            images=[picture],
        )
        assert runs.pending(KEY) == [Pending(1, "1712233981.000100")]
        assert copies.thread_messages(KEY)[0] == [
            ThreadMessage("1712233981.000100", "<@U1>", "look")
        ]
        assert images.recent_images(KEY, 5) == [(1, picture)]
        log.append(KEY, FinishRequest(), TS, answered_through=1)
        assert runs.pending(KEY) == []
        assert SqlHousekeeping(database).threads()[0].entries == 3
    finally:
        database.close()
    # What they wrote is the store's: opened again, the whole store reads it back.
    store = open_store(store_url)
    try:
        assert [e.index for e in store.entries(KEY)] == [0, 1, 2]
    finally:
        store.close()
