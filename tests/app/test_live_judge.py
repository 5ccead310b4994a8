"""Live answers judged (ASSISTANT_JUDGE_SAMPLE; docs/evaluation.md, "Watching live quality"):
through the Bolt tier with the fake Slack and the fake OpenAI over HTTP. The judge is asked
after the answer is posted (the fake model's answer to the judge reads what the fake Slack
had been sent by then), once per answer, never with a share of 0; a judge that fails never
reaches the thread; its calls count in `assistant usage`; its verdict is an OpenTelemetry
event on the answer's trace."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from assistant.fakes.openai import responses as replies
from assistant.model.judging import LIVE_RUBRIC
from assistant.run.judging.live import sampled
from context.storage import ThreadKey
from tests.cli import run_cli
from tests.harness import RunningApp, mention, thread_of
from tests.otlp_receiver import OtlpReceiver

pytestmark = pytest.mark.listeners

JUDGE_USAGE = {"prompt_tokens": 300, "completion_tokens": 20, "total_tokens": 320}


class Judge:
    """The fake model's answers once the scripted ones are used: the judge's, each noting
    how many posts the fake Slack had been sent when it was asked."""

    def __init__(self, slack, verdict: str = '{"verdict": "good", "reason": "It answers."}'):
        self.slack, self.verdict = slack, verdict
        self.asked: list[tuple[dict[str, Any], int]] = []

    def __call__(self, body: dict[str, Any]) -> replies.Completion:
        assert body["messages"][0]["content"] == LIVE_RUBRIC, "only the judge is unscripted"
        self.asked.append((body, len(self.slack.calls_to("chat.postMessage"))))
        return replies.text(self.verdict, usage=JUDGE_USAGE)


def answer(model, text: str) -> None:
    model.script(
        replies.tool_calls(
            ("postMessage", {"text": text, "reasoning": "answer"}),
            ("finishRequest", {"reasoning": "done"}),
        )
    )


def ask(app: RunningApp, slack, model, question: str, reply: str, **kwargs: Any) -> dict:
    answer(model, reply)
    event = mention(slack, question, **kwargs)
    assert app.send_event(event).status == 200
    app.wait_handled()
    return event


def posts(slack) -> list[str]:
    return [call.params["text"] for call in slack.calls_to("chat.postMessage")]


def test_each_answer_is_judged_once_after_it_is_posted(make_app, slack, model):
    app = make_app(assistant_judge_sample=1, assistant_judge_model="gpt-judge")
    judge = Judge(slack)
    model.default = judge
    first = ask(app, slack, model, "where do we eat?", "At Rosa's.")
    app.wait_judged()
    key = thread_of(first)
    # The question again in the same thread: only the new answer is judged.
    ask(app, slack, model, "and tomorrow?", "At Mario's.", thread_ts=first["ts"])
    app.wait_judged()

    assert [json.loads(body["messages"][1]["content"]) for body, _ in judge.asked] == [
        {"question": "where do we eat?", "ANSWER": "At Rosa's."},
        {"question": "and tomorrow?", "ANSWER": "At Mario's."},
    ]
    # Each judge call came after its answer was posted, and after the run's own calls.
    assert [seen for _, seen in judge.asked] == [1, 2]
    assert [body["model"] for body, _ in judge.asked] == ["gpt-judge", "gpt-judge"]
    requests = model.requests
    assert [r["messages"][0]["content"] == LIVE_RUBRIC for r in requests] == [
        False,
        True,
        False,
        True,
    ]
    # The verdict is beside the log, not in it: no entry of the thread says it.
    log = app.log(key)
    assert not any("good" in json.dumps(entry["content"]) for entry in log)
    assert posts(slack) == ["At Rosa's.", "At Mario's."]
    recent = app.assistant.store.recent_verdicts(10)
    assert sorted((v.answer, v.verdict, v.model, v.judge_model) for v in recent) == [
        (2, "good", "gpt-4o-mini", "gpt-judge"),
        (5, "good", "gpt-4o-mini", "gpt-judge"),
    ]
    # Once per answer, whoever asks again (a restarted process would claim it in vain).
    assert not app.assistant.store.claim_judging(key, 2, "gpt-4o-mini", "gpt-judge")

    url = app.settings.storage.database_url
    report = run_cli("usage", "--json", env={"DATABASE_URL": url})
    assert report.returncode == 0, report.stderr
    total = json.loads(report.stdout)["total"]
    assert (total["calls"], total["judge_calls"], total["answers"]) == (4, 2, 2)
    by_model = json.loads(
        run_cli("usage", "--json", "--by", "model", env={"DATABASE_URL": url}).stdout
    )
    judge_line = next(g for g in by_model["groups"] if g["model"] == "gpt-judge")
    assert (judge_line["calls"], judge_line["judge_calls"], judge_line["input_tokens"]) == (
        2,
        2,
        600,
    )
    verdicts = run_cli("eval", "verdicts", "--json", "--recent", "5", env={"DATABASE_URL": url})
    assert verdicts.returncode == 0, verdicts.stderr
    [line] = json.loads(verdicts.stdout)["lines"]
    assert (line["channel"], line["model"], line["judged"], line["good"]) == (
        key.channel,
        "gpt-4o-mini",
        2,
        2,
    )
    assert line["judges"] == ["gpt-judge"] and line["good_share"] == 1.0
    assert json.loads(verdicts.stdout)["recent"][0]["reason"] == "It answers."
    judged = run_cli("usage", "--judged", env={"DATABASE_URL": url})
    assert judged.returncode == 0 and "2 answers judged" in judged.stdout.decode()


def test_a_share_of_zero_judges_nothing(make_app, slack, model):
    app = make_app()
    ask(app, slack, model, "where do we eat?", "At Rosa's.")
    assert app.assistant.judge is None
    assert len(model.requests) == 1 and model.pending == 0
    assert app.assistant.store.recent_verdicts(10) == []


@pytest.mark.parametrize(
    "failure",
    [replies.error(400, message="bad judge"), replies.text("I liked it", usage=JUDGE_USAGE)],
    ids=["refused", "no-verdict"],
)
def test_a_judge_that_fails_never_reaches_the_thread(make_app, slack, model, failure, caplog):
    app = make_app(assistant_judge_sample=1)
    answer(model, "At Rosa's.")
    model.script(failure)
    event = mention(slack, "where do we eat?")
    assert app.send_event(event).status == 200
    app.wait_handled()
    app.wait_judged()

    assert posts(slack) == ["At Rosa's."]  # nothing more said in the thread
    key = thread_of(event)
    assert app.log(key)[-1]["content"]["toolCall"] == "finishRequest"
    [verdict] = app.assistant.store.recent_verdicts(10)
    assert verdict.verdict is None and verdict.judge_model == "gpt-4o-mini"
    lines = [r.getMessage() for r in caplog.records if r.name == "assistant.run.judging.live"]
    assert len(lines) == 1 and lines[0].startswith(f"live judge: {key}@2: ")


def test_sampling_is_the_same_answer_the_same_decision():
    key = ThreadKey("T1", "C1", "1712233980.000100")
    chosen = [index for index in range(2_000) if sampled(key, index, 0.25)]
    assert chosen == [index for index in range(2_000) if sampled(key, index, 0.25)]
    assert 400 < len(chosen) < 600  # about a quarter
    assert not any(sampled(key, index, 0.0) for index in range(100))
    assert all(sampled(key, index, 1.0) for index in range(100))
    # A larger share keeps every answer a smaller one took: raising it judges more, not others.
    assert set(chosen) <= {index for index in range(2_000) if sampled(key, index, 0.5)}


@pytest.fixture
def otel(monkeypatch: pytest.MonkeyPatch) -> Iterator[OtlpReceiver]:
    receiver = OtlpReceiver().start()
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint)
    monkeypatch.setenv("OTEL_SERVICE_NAME", "aya-test")
    monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "20")
    monkeypatch.setenv("OTEL_METRIC_EXPORT_INTERVAL", "50")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "2")
    yield receiver
    receiver.stop()


def test_the_verdict_is_an_evaluation_event_on_the_answers_trace(otel, make_app, slack, model):
    app = make_app(assistant_judge_sample=1)
    model.default = Judge(slack)
    ask(app, slack, model, "where do we eat?", "At Rosa's.")
    app.wait_judged()

    def evaluated(received):
        return next((s for s in received.spans if s.name == "evaluate answer"), None)

    span = otel.wait_for(evaluated)
    [post] = [s for s in otel.received.spans if s.name == "execute_tool postMessage"]
    assert (span.trace_id, span.parent_id) == (post.trace_id, post.span_id)
    assert span.attributes["assistant.entry.index"] == 2
    assert span.events == [
        (
            "gen_ai.evaluation.result",
            {
                "gen_ai.evaluation.name": "answer_quality",
                "gen_ai.evaluation.score.label": "good",
                "gen_ai.request.model": "gpt-4o-mini",
                "gen_ai.response.model": "gpt-4o-mini",
            },
        )
    ]  # the reason only where message content is captured


def _token_budget(app, tokens: int) -> None:
    from assistant.fakes import ids
    from context.channels import ChannelConfig

    config = ChannelConfig(
        team=ids.TEAM_ID, channel=ids.CHANNEL_ID, updated_by="U0ADMIN", daily_token_budget=tokens
    )
    app.assistant.store.set_channel_config(config)


def _spent_today(app) -> tuple[int, int]:
    from datetime import UTC, datetime

    from assistant.fakes import ids
    from context.spend import periods

    day = periods(datetime.now(UTC))[0].name
    rows = app.assistant.store.spend(ids.TEAM_ID, [day])
    [(spent, reserved)] = [(row[4], row[5]) for row in rows if row[1] == ids.CHANNEL_ID]
    return spent, reserved


def test_the_judges_call_counts_in_the_channels_budget(make_app, slack, model):
    """A token budget (no ASSISTANT_PRICES): the judge's call is held and counted as the
    run's is, its hold replaced by the usage it reported."""
    app = make_app(assistant_judge_sample=1, assistant_answer_tokens=500)
    _token_budget(app, 1_000_000)
    run_usage = {"prompt_tokens": 1_000, "completion_tokens": 100, "total_tokens": 1_100}
    model.script(
        replies.tool_calls(
            ("postMessage", {"text": "At Rosa's.", "reasoning": "answer"}),
            ("finishRequest", {"reasoning": "done"}),
            usage=run_usage,
        )
    )
    model.default = Judge(slack)
    assert app.send_event(mention(slack, "where do we eat?")).status == 200
    app.wait_handled()
    app.wait_judged()
    assert _spent_today(app) == (1_100 + JUDGE_USAGE["total_tokens"], 0)
    [verdict] = app.assistant.store.recent_verdicts(10)
    assert verdict.verdict == "good"


def test_an_answer_is_not_judged_where_the_judge_would_pass_the_budget(make_app, slack, model):
    """The answering model priced (its calls in dollars: no dollar budget), the judge's not
    (its calls in tokens): a token budget smaller than the judge's worst case leaves the
    answer unjudged, the model never asked, nothing said in the thread."""
    app = make_app(
        assistant_judge_sample=1,
        assistant_judge_model="judge-unpriced",
        assistant_answer_tokens=500,
        assistant_prices={"gpt-4o-mini": {"input": 1.0, "output": 1.0}},
    )
    _token_budget(app, 100)
    judge = Judge(slack)
    model.default = judge
    event = ask(app, slack, model, "where do we eat?", "At Rosa's.")
    app.wait_judged()

    assert judge.asked == []
    assert posts(slack) == ["At Rosa's."]
    [verdict] = app.assistant.store.recent_verdicts(10)
    assert verdict.verdict is None
    assert verdict.reason == "not judged: the channel's daily budget is reached"
    assert app.log(thread_of(event))[-1]["content"]["toolCall"] == "finishRequest"
