"""The agent loop (assistant/run/loop/agent.py) on a real store (SQLite and PostgreSQL), the
real openai and slack-sdk clients against the fakes over HTTP: a tool call recorded then carried
out, the run's last entry answering the request; a call that cannot be parsed told to the model
and the run going on; the step cap and a model error each ending the run with one apology in the
thread and an `Error:` entry."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator

import pytest
from slack_sdk.web.async_client import AsyncWebClient

from assistant.fakes import FakeOpenAI, FakeSlack, ids
from assistant.fakes.openai import responses as replies
from assistant.model.client import ModelClient
from assistant.run.core.recorder import Recorder
from assistant.run.core.requests import AnswerRequest
from assistant.run.loop.agent import Agent, SlackSide
from assistant.run.loop.answer_so_far import NOT_FINISHED
from assistant.run.loop.apologies import SORRY_MODEL, SORRY_STEPS
from context.entry import FAILURE_PREFIX, UserContent
from context.storage import EntryMeta, Opening, Store, ThreadKey, ThreadMessage
from context.trace import TraceWriter
from tests.harness import app_settings

KEY = ThreadKey(ids.TEAM_ID, "C0AGENT", "1712233980.000100")
TS = "2025-04-04T12:33:00Z"


@pytest.fixture
async def agent(
    store: Store, store_url: str, slack: FakeSlack, model: FakeOpenAI
) -> AsyncIterator[Agent]:
    """The agent the app builds from its settings, minus the parts a run may go without
    (streaming, sessions, channel rules), on a thread with one question."""
    settings = app_settings(slack, model, store_url, assistant_max_steps=3)
    store.record_message(
        KEY,
        UserContent(userid=f"<@{ids.USER_ID}>", text="lunch?"),
        TS,
        EntryMeta(slack_ts=KEY.thread_ts, wants_answer=True),
        Opening(lambda: "You are Aya.", TS),
        ThreadMessage(KEY.thread_ts, f"<@{ids.USER_ID}>", "lunch?"),
    )
    slack.add_message(KEY.channel, ts=KEY.thread_ts, user=ids.USER_ID, text="lunch?")
    built = Agent(
        Recorder(store, TraceWriter(io.StringIO())),
        ModelClient(settings.model.options()),
        max_steps=settings.answers.max_steps,
        budget=settings.model.prompt_budget(),
        slack=SlackSide(AsyncWebClient(token=ids.BOT_TOKEN, base_url=slack.api_url)),
        post_caps=settings.answers.post_caps(),
    )
    yield built
    await built.model.close()


REQUEST = [AnswerRequest(index=1, message_ts=KEY.thread_ts, bot_user_id=ids.BOT_USER_ID)]


def posted(slack: FakeSlack) -> list[str]:
    return [c.params["text"] for c in slack.calls_to("chat.postMessage")]


def contents(store: Store) -> list[object]:
    return [e.content for e in store.entries(KEY)]


async def test_a_call_is_recorded_then_carried_out_and_the_last_entry_answers(
    agent: Agent, store: Store, slack: FakeSlack, model: FakeOpenAI
) -> None:
    model.script(answer("Noodles at noon."))
    await agent.run(KEY, REQUEST)
    assert posted(slack) == ["Noodles at noon."]
    post, finish = store.entries(KEY)[2:]
    assert (post.content.toolCall, finish.content.toolCall) == ("postMessage", "finishRequest")
    assert store.pending(KEY) == []  # answered in finishRequest's write
    # The model saw the log: the question in the prompt's log.
    assert "lunch?" in model.requests[0]["messages"][1]["content"]


async def test_a_call_that_cannot_be_parsed_is_told_and_the_run_goes_on(
    agent: Agent, store: Store, slack: FakeSlack, model: FakeOpenAI
) -> None:
    model.script(
        replies.tool_calls(("postMessage", {"txet": "typo"})),
        answer("Noodles."),
    )
    await agent.run(KEY, REQUEST)
    assert posted(slack) == ["Noodles."]  # nothing of the bad call reached Slack
    told = [c for c in contents(store) if isinstance(c, str) and c.startswith(FAILURE_PREFIX)]
    assert len(told) == 1 and "postMessage" in told[0]
    # The second call's prompt carried what was wrong with the first.
    assert told[0] in model.requests[1]["messages"][1]["content"]
    assert store.pending(KEY) == []


async def test_the_step_cap_ends_the_run_with_one_apology(
    agent: Agent, store: Store, slack: FakeSlack, model: FakeOpenAI
) -> None:
    model.script(
        *[
            replies.tool_calls(("postMessage", {"text": f"Thinking {n}…", "reasoning": "more"}))
            for n in range(3)
        ]
    )
    await agent.run(KEY, REQUEST)
    assert len(model.requests) == 3  # ASSISTANT_MAX_STEPS
    assert posted(slack) == ["Thinking 0…", "Thinking 1…", "Thinking 2…", SORRY_STEPS.english()]
    last = contents(store)[-1]
    assert isinstance(last, str) and last.startswith(f"{FAILURE_PREFIX}stopped after 3 steps")
    assert store.pending(KEY) == []  # ended: answered, not retried


async def test_a_model_error_ends_the_run_with_one_apology(
    agent: Agent, store: Store, slack: FakeSlack, model: FakeOpenAI
) -> None:
    model.script(*replies.error(status=401, message="Incorrect API key provided"))
    await agent.run(KEY, REQUEST)
    assert posted(slack) == [SORRY_MODEL.english()]
    last = contents(store)[-1]
    assert isinstance(last, str) and last.startswith(FAILURE_PREFIX)
    assert ids.OPENAI_API_KEY not in last  # the error is named, never the key
    assert store.pending(KEY) == []


def answer(text: str, reasoning: str = "answer") -> replies.Completion:
    """A reply that posts `text` and finishes."""
    return replies.tool_calls(
        ("postMessage", {"text": text, "reasoning": reasoning}),
        ("finishRequest", {"reasoning": "done"}),
    )


def finish(reasoning: str = "nothing to answer") -> replies.Completion:
    return replies.tool_calls(("finishRequest", {"reasoning": reasoning}))


async def test_a_finish_before_any_post_is_refused_once_and_the_model_answers(
    agent: Agent, store: Store, slack: FakeSlack, model: FakeOpenAI
) -> None:
    model.script(
        finish(),
        answer("Noodles."),
    )
    await agent.run(KEY, REQUEST)
    assert posted(slack) == ["Noodles."]
    assert contents(store)[2] == NOT_FINISHED  # not a finishRequest entry: the answer went on
    assert NOT_FINISHED in model.requests[1]["messages"][1]["content"]
    # The refused call's model figures stay on record: it was a step of the answer.
    assert store.metadata(KEY, 2)[0].latency_ms is not None
    assert store.pending(KEY) == []


async def test_a_second_finish_without_a_post_ends_a_follow_up_s_answer_silent(
    agent: Agent, store: Store, slack: FakeSlack, model: FakeOpenAI
) -> None:
    model.script(finish(), finish("still nothing to answer"))
    await agent.run(KEY, REQUEST)  # a follow-up (not addressed): people among themselves
    assert posted(slack) == []  # the model insisted: nothing posted, no apology
    assert contents(store)[2] == NOT_FINISHED
    last = store.entries(KEY)[-1]
    assert last.content.toolCall == "finishRequest"  # type: ignore[union-attr]
    assert store.pending(KEY) == []


async def test_a_run_resumed_after_the_refusal_is_not_refused_again(
    agent: Agent, store: Store, slack: FakeSlack, model: FakeOpenAI
) -> None:
    """The refusal is on the log: a run that resumes the answer (its process died after the
    note) lets the answer end at the first finishRequest."""
    store.append(KEY, NOT_FINISHED, TS, EntryMeta(latency_ms=5.0))
    model.script(finish())
    await agent.run(KEY, REQUEST)
    assert len(model.requests) == 1
    assert store.pending(KEY) == []


async def test_a_finish_after_a_post_of_an_earlier_reply_ends_the_answer(
    agent: Agent, store: Store, slack: FakeSlack, model: FakeOpenAI
) -> None:
    model.script(
        replies.tool_calls(("postMessage", {"text": "Noodles.", "reasoning": "answer"})),
        finish("answered"),
    )
    await agent.run(KEY, REQUEST)
    assert posted(slack) == ["Noodles."]
    assert NOT_FINISHED not in contents(store)
    assert len(model.requests) == 2


async def test_the_same_text_twice_in_one_answer_is_posted_once(
    agent: Agent, store: Store, slack: FakeSlack, model: FakeOpenAI
) -> None:
    model.script(
        replies.tool_calls(("postMessage", {"text": "Noodles.", "reasoning": "answer"})),
        answer(" Noodles.\n", "answer again"),
    )
    await agent.run(KEY, REQUEST)
    assert posted(slack) == ["Noodles."]
    refused = (
        "Error: the postMessage of entry 3 was not posted: "
        "this answer already posted the same text."
    )
    assert refused in contents(store)
    assert store.pending(KEY) == []


async def test_a_post_that_showed_nothing_does_not_let_the_answer_end_silent(
    agent: Agent, store: Store, slack: FakeSlack, model: FakeOpenAI
) -> None:
    """What counts is what reached the person: a post refused as invisible does not."""
    model.script(
        answer("\u200b "),
        answer("Noodles."),
    )
    await agent.run(KEY, REQUEST)
    assert posted(slack) == ["Noodles."]
    assert NOT_FINISHED in contents(store)
    assert store.pending(KEY) == []
