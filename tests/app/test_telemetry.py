"""OpenTelemetry through the real app: a loopback OTLP/HTTP receiver (tests/otlp_receiver.py)
decodes what the app's exporters send, and the spans, attributes and metrics are checked
against what the fake model reported and the fake Slack answered (docs/architecture.md,
"Telemetry"; docs/operations.md, "Watching it in production")."""

from __future__ import annotations

import json
import logging
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from assistant.fakes import ids
from assistant.fakes._server import Hold
from assistant.fakes.events.panel import feedback_click, signed_interaction_request
from assistant.fakes.openai import responses as replies
from assistant.fakes.openai.stream import Streamed, StreamStyle
from context.channels import ChannelConfig
from tests.harness import RunningApp, mention, thread_of
from tests.mcp_servers import ShopServer
from tests.otlp_receiver import OtlpReceiver, Received, Span

CLIENT = 3  # the protobuf's SpanKind value
STATUS_ERROR = 2


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    started = OtlpReceiver().start()
    yield started
    started.stop()


def telemetry_env(monkeypatch: pytest.MonkeyPatch, endpoint: str) -> None:
    """The SDK's own variables; short export delays so that the receiver hears soon (the
    test waits on what it receives, never on time)."""
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
    monkeypatch.setenv("OTEL_SERVICE_NAME", "aya-test")
    monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "20")
    monkeypatch.setenv("OTEL_METRIC_EXPORT_INTERVAL", "50")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "2")


@pytest.fixture
def otel(monkeypatch: pytest.MonkeyPatch, receiver: OtlpReceiver) -> OtlpReceiver:
    telemetry_env(monkeypatch, receiver.endpoint)
    return receiver


def usage(prompt: int, cached: int, completion: int) -> dict[str, Any]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached},
    }


def call_ids(reply: replies.Completion) -> list[str]:
    return [call["id"] for call in reply.message["tool_calls"]]


def ask(app: RunningApp, slack, text: str) -> dict[str, Any]:
    event = mention(slack, text)
    before = len(slack.calls_to("reactions.remove"))
    assert app.send_event(event).status == 200
    slack.wait_for_call("reactions.remove", count=before + 1)
    app.wait_handled()
    return event


def runs(received: Received, count: int = 1) -> list[Span] | None:
    """The `invoke_agent` spans, once `count` have arrived (a run's span ends last)."""
    found = [s for s in received.spans if s.name.startswith("invoke_agent")]
    return found if len(found) >= count else None


def children(received: Received, parent: Span) -> list[Span]:
    return [s for s in received.spans if s.parent_id == parent.span_id]


# The children of `two_tools`' run, in order.
TWO_TOOLS_SPANS = [
    "chat gpt-4o-mini",
    "execute_tool getThreadHistory",
    "chat gpt-4o-mini",
    "execute_tool postMessage",
    "execute_tool finishRequest",
]


def two_tools(model) -> tuple[replies.Completion, replies.Completion]:
    """A run of two model calls: getThreadHistory, then postMessage and finishRequest."""
    first = replies.tool_calls(
        ("getThreadHistory", {"reasoning": "look back"}), usage=usage(1200, 1024, 30)
    )
    second = replies.tool_calls(
        ("postMessage", {"text": "Here it is.", "reasoning": "answer"}),
        ("finishRequest", {"reasoning": "done"}),
        usage=usage(1500, 0, 45),
    )
    model.script(first, second)
    return first, second


def test_a_run_is_one_invoke_agent_span_with_its_calls_and_tools(otel, make_app, slack, model):
    app = make_app()
    first, second = two_tools(model)
    event = ask(app, slack, "what did we decide?")
    key = thread_of(event)

    [run] = otel.wait_for(runs)
    spans = otel.wait_for(lambda r: children(r, run) if len(children(r, run)) >= 5 else None)
    assert run.attributes == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.provider.name": "openai",
        "gen_ai.agent.name": "Aya",
        "gen_ai.conversation.id": str(key),
        "assistant.run.progress.steps": 2,
        "assistant.run.outcome": "finished",
    }
    assert run.resource["service.name"] == "aya-test"
    assert [s.name for s in spans] == TWO_TOOLS_SPANS
    chats = [s for s in spans if s.name.startswith("chat")]
    figures_sent = ((1200, 1024, 30), (1500, 0, 45))
    for chat, reply, figures in zip(chats, (first, second), figures_sent, strict=True):
        assert chat.kind == CLIENT
        attributes = dict(chat.attributes)
        response_id = attributes.pop("gen_ai.response.id")
        assert response_id.startswith("chatcmpl-")
        assert attributes == {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "openai",
            "gen_ai.request.model": "gpt-4o-mini",
            "gen_ai.request.max_tokens": 4000,
            "gen_ai.request.stream": False,
            "gen_ai.conversation.id": str(key),
            "gen_ai.response.model": "gpt-4o-mini",
            "gen_ai.response.finish_reasons": [reply.finish_reason],
            "gen_ai.usage.input_tokens": figures[0],
            "gen_ai.usage.cache_read.input_tokens": figures[1],
            "gen_ai.usage.output_tokens": figures[2],
        }
    tools = [s for s in spans if s.name.startswith("execute_tool")]
    assert [s.attributes["gen_ai.tool.call.id"] for s in tools] == call_ids(first) + call_ids(
        second
    )
    assert [s.attributes["assistant.entry.index"] for s in tools] == [2, 4, 5]
    posted = slack.calls_to("chat.postMessage")[-1].response["ts"]
    assert tools[1].attributes["slack.message.ts"] == posted
    # No contents without the opt-in.
    assert not any(
        name.startswith(("gen_ai.input", "gen_ai.output", "gen_ai.tool.call.arg"))
        for s in otel.received.spans
        for name in s.attributes
    )
    # The event's write is a span of its own (the ack path), which the run links to.
    [recorded] = [s for s in otel.received.spans if s.name == "record message"]
    assert run.links == [(recorded.trace_id, recorded.span_id)]
    assert recorded.attributes["slack.message.ts"] == event["ts"]


def test_contents_are_exported_only_on_the_opt_in_and_made_printable(
    otel, make_app, slack, model, monkeypatch
):
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    app = make_app()
    two_tools(model)
    ask(app, slack, "read \u202ebackwards please")

    otel.wait_for(runs)
    chat = next(s for s in otel.received.spans if s.name.startswith("chat"))
    prompt = chat.attributes["gen_ai.input.messages"]
    assert "read \\\\u202ebackwards please" in prompt  # as the console shows it
    assert "\u202e" not in prompt
    assert '"name": "getThreadHistory"' in chat.attributes["gen_ai.output.messages"]
    exported = repr([s.attributes for s in otel.received.spans])
    for secret in (ids.BOT_TOKEN, ids.OPENAI_API_KEY, ids.SIGNING_SECRET):
        assert secret not in exported


def test_a_failed_model_call_has_its_error_type(otel, make_app, slack, model):
    app = make_app()
    model.script(replies.error(500))
    ask(app, slack, "hello")

    [run] = otel.wait_for(runs)
    [chat] = [s for s in children(otel.received, run) if s.name.startswith("chat")]
    assert chat.attributes["error.type"] == "500"
    assert chat.status_code == STATUS_ERROR
    assert run.attributes["assistant.run.outcome"] == "error"


def test_a_budget_refusal_is_on_the_run_s_span(otel, make_app, slack, model):
    """docs/operations.md#spend-limits: no model call, the run's outcome and an event."""
    app = make_app()
    app.assistant.store.set_channel_config(
        ChannelConfig(team=ids.TEAM_ID, channel=ids.CHANNEL_ID, daily_token_budget=0)
    )
    ask(app, slack, "hello")

    [run] = otel.wait_for(runs)
    assert run.attributes["assistant.run.outcome"] == "budget_reached"
    [(name, attributes)] = run.events
    assert name == "assistant.budget_reached"
    assert attributes["assistant.budget.note"].startswith(
        "Budget: this channel has reached its daily budget of 0 tokens"
    )
    assert not [s for s in children(otel.received, run) if s.name.startswith("chat")]
    assert model.requests == []


def test_metrics_are_received(otel, make_app, slack, model):
    app = make_app()
    two_tools(model)
    ask(app, slack, "what did we decide?")

    def metrics(received: Received) -> dict[str, Any] | None:
        wanted = ("gen_ai.client.token.usage", "assistant.runs", "assistant.slack.posts")
        return received.metrics if all(name in received.metrics for name in wanted) else None

    found = otel.wait_for(metrics)
    tokens = {p["gen_ai.token.type"]: value for p, value in found["gen_ai.client.token.usage"]}
    assert tokens == {"input": (2, 2700), "output": (2, 75)}
    [(attributes, (calls, _))] = found["gen_ai.client.operation.duration"]
    assert calls == 2 and attributes["gen_ai.request.model"] == "gpt-4o-mini"
    assert found["assistant.runs"] == [({"assistant.run.outcome": "finished"}, 1)]
    assert found["assistant.slack.posts"] == [({}, 1)]
    acknowledged = found["assistant.events.acknowledged"]
    assert ({"slack.event.type": "app_mention"}, 1) in acknowledged


def test_a_feedback_click_is_recorded_on_the_answers_trace(otel, make_app, slack, model):
    app = make_app()
    two_tools(model)
    event = ask(app, slack, "what did we decide?")
    key = thread_of(event)
    reply = slack.calls_to("chat.postMessage")[-1]
    message = slack.store.get(key.channel, reply.response["ts"])
    body, headers = signed_interaction_request(
        feedback_click(message, positive=True, channel=key.channel)
    )
    assert app.request("POST", "/slack/events", body, headers).status == 200
    app.wait_handled()

    [feedback] = otel.wait_for(lambda r: [s for s in r.spans if s.name == "feedback"])
    [post] = [s for s in otel.received.spans if s.name == "execute_tool postMessage"]
    assert (feedback.trace_id, feedback.parent_id) == (post.trace_id, post.span_id)
    assert feedback.attributes["assistant.feedback.vote"] == "good"


def test_a_collector_that_is_down_changes_nothing_for_the_run(
    monkeypatch, caplog, make_app, slack, model
):
    with socket.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        down = f"http://127.0.0.1:{closed.getsockname()[1]}"
    telemetry_env(monkeypatch, down)
    caplog.set_level(logging.INFO)
    app = make_app()
    two_tools(model)
    ask(app, slack, "what did we decide?")
    two_tools(model)
    ask(app, slack, "and then?")
    assert [c.params["text"] for c in slack.calls_to("chat.postMessage")] == ["Here it is."] * 2
    app.stop()  # what is queued is exported, or not, before it returns

    lines = [r for r in caplog.records if r.name.startswith(("assistant.telemetry", "opentel"))]
    assert len(lines) == 1, [r.getMessage() for r in lines]
    assert lines[0].levelno == logging.WARNING
    assert down in lines[0].getMessage()


def test_a_streamed_call_has_its_time_to_first_chunk(otel, make_app, slack, model):
    app = make_app(assistant_stream="auto")
    first, second = two_tools(model)
    event = ask(app, slack, "what did we decide?")

    [run] = otel.wait_for(runs)
    spans = otel.wait_for(lambda r: children(r, run) if len(children(r, run)) >= 5 else None)
    chats = [s for s in spans if s.name.startswith("chat")]
    assert [c.attributes["gen_ai.request.stream"] for c in chats] == [True, True]
    assert [c.attributes["gen_ai.usage.input_tokens"] for c in chats] == [1200, 1500]
    assert [c.attributes["gen_ai.usage.output_tokens"] for c in chats] == [30, 45]
    for chat in chats:
        assert chat.attributes["gen_ai.response.time_to_first_chunk"] > 0
    tools = [s for s in spans if s.name.startswith("execute_tool")]
    assert [s.attributes["gen_ai.tool.call.id"] for s in tools] == call_ids(first) + call_ids(
        second
    )
    posted = slack.store.get(event["channel"], tools[1].attributes["slack.message.ts"])
    assert (posted["text"], posted["metadata"]["event_payload"]["entry"]) == ("Here it is.", 4)


def test_a_post_slack_refused_has_slacks_error_on_its_tool_span(otel, make_app, slack, model):
    app = make_app()
    model.script(replies.tool_calls(("postMessage", {"text": "Here you go", "reasoning": "r"})))
    slack.fail("chat.postMessage", "channel_not_found", times=2)
    ask(app, slack, "the report, please")

    [run] = otel.wait_for(runs)
    [post] = [s for s in children(otel.received, run) if s.name == "execute_tool postMessage"]
    assert post.status_code == STATUS_ERROR
    assert post.attributes["error.type"] == "channel_not_found"  # Slack's error code
    assert "channel_not_found (from chat.postMessage)" in post.attributes["slack.error"]
    assert "slack.message.ts" not in post.attributes
    assert run.attributes["assistant.run.outcome"] == "error"


def test_slacks_429s_are_counted(otel, make_app, slack, model):
    app = make_app()
    model.script(
        replies.tool_calls(
            ("postMessage", {"text": "Here you go", "reasoning": "r"}),
            ("finishRequest", {"reasoning": "done"}),
        )
    )
    slack.rate_limit("chat.postMessage", retry_after=1)
    ask(app, slack, "the report, please")

    def limited(received: Received) -> list[tuple[dict[str, Any], Any]] | None:
        return received.metrics.get("assistant.slack.rate_limited")

    assert otel.wait_for(limited) == [({"slack.method": "chat.postMessage"}, 1)]
    assert [c.ok for c in slack.calls_to("chat.postMessage")] == [False, True]


def test_a_stopped_run_is_cancelled_and_its_stop_counted(otel, make_app, slack, model):
    slack.agents.agent = True
    app = make_app(assistant_stream="auto")
    gate = Hold()
    reply = replies.tool_calls(("postMessage", {"text": "A long answer " * 20, "reasoning": "r"}))
    model.script(Streamed(reply, StreamStyle(pauses=((20, gate),))))
    event = mention(slack, "lunch ideas?")
    assert app.send_event(event).status == 200
    gate.wait_reached()
    slack.wait_for_call("chat.startStream")
    assert app.send_event(slack.agents.press_stop(event["channel"], event["ts"])).status == 200
    slack.wait_for_call("agents.sessions.setStatus", where=lambda c: c.params["status"] == "active")
    gate.release()
    app.wait_idle()

    [run] = otel.wait_for(runs)
    assert run.attributes["assistant.run.outcome"] == "cancelled"
    [chat] = [s for s in children(otel.received, run) if s.name.startswith("chat")]
    assert chat.attributes["error.type"] == "CancelledError"

    def stops(received: Received) -> dict[str, Any] | None:
        return received.metrics if "assistant.stops" in received.metrics else None

    found = otel.wait_for(stops)
    assert found["assistant.stops"] == [({}, 1)]
    assert found["assistant.runs"] == [({"assistant.run.outcome": "cancelled"}, 1)]


def test_a_call_of_an_mcp_servers_tool_is_its_own_execute_tool_span(
    otel, make_app, slack, model, tmp_path
):
    server = ShopServer().start()
    try:
        path = tmp_path / "mcp.json"
        path.write_text(json.dumps({"servers": {"shop": {"url": server.url}}}))
        app = make_app(assistant_mcp_file=str(path), assistant_mcp_call_seconds=1)
        lookup = replies.tool_calls(("shop__lookup_order", {"order": "A1", "reasoning": "r"}))
        slow = replies.tool_calls(("shop__slow", {"reasoning": "r"}))
        model.script(
            lookup,
            slow,
            replies.tool_calls(
                ("postMessage", {"text": "A1 shipped.", "reasoning": "answer"}),
                ("finishRequest", {"reasoning": "done"}),
            ),
        )
        ask(app, slack, "where is A1?")
        [run] = otel.wait_for(runs)
        spans = otel.wait_for(lambda r: children(r, run) if len(children(r, run)) >= 7 else None)
    finally:
        server.stop()
    tools = {s.name: s for s in spans if s.name.startswith("execute_tool shop__")}
    assert set(tools) == {"execute_tool shop__lookup_order", "execute_tool shop__slow"}
    looked = tools["execute_tool shop__lookup_order"]
    assert looked.attributes["gen_ai.tool.name"] == "shop__lookup_order"
    assert looked.attributes["gen_ai.tool.call.id"] == call_ids(lookup)[0]
    assert looked.status_code != STATUS_ERROR
    assert tools["execute_tool shop__slow"].status_code == STATUS_ERROR  # past its deadline
