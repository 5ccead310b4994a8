"""OpenTelemetry over gRPC through the real app (`OTEL_EXPORTER_OTLP_PROTOCOL=grpc`, the
`grpc` extra): a loopback gRPC OTLP receiver (tests/otlp_grpc_receiver.py) gets a run's span
tree and its metrics, decoded from the real protobuf requests."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.app.test_telemetry import (
    TWO_TOOLS_SPANS,
    ask,
    children,
    runs,
    telemetry_env,
    two_tools,
)
from tests.harness import thread_of
from tests.otlp_grpc_receiver import GrpcOtlpReceiver
from tests.otlp_receiver import Received


@pytest.fixture
def otel(monkeypatch: pytest.MonkeyPatch) -> Iterator[GrpcOtlpReceiver]:
    receiver = GrpcOtlpReceiver().start()
    telemetry_env(monkeypatch, receiver.endpoint)  # host:port, the grpc exporter's form
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_INSECURE", "true")  # plain text on loopback
    yield receiver
    receiver.stop()


def test_a_runs_spans_and_metrics_arrive_over_grpc(otel, make_app, slack, model):
    app = make_app()
    two_tools(model)
    event = ask(app, slack, "what did we decide?")

    [run] = otel.wait_for(runs)
    spans = otel.wait_for(lambda r: children(r, run) if len(children(r, run)) >= 5 else None)
    assert run.attributes["gen_ai.conversation.id"] == str(thread_of(event))
    assert run.attributes["assistant.run.outcome"] == "finished"
    assert run.resource["service.name"] == "aya-test"
    assert [s.name for s in spans] == TWO_TOOLS_SPANS
    assert [s.attributes.get("gen_ai.usage.input_tokens") for s in spans[::2]] == [1200, 1500, None]
    [recorded] = [s for s in otel.received.spans if s.name == "record message"]
    assert run.links == [(recorded.trace_id, recorded.span_id)]

    def metrics(received: Received) -> dict[str, Any] | None:
        wanted = ("gen_ai.client.token.usage", "assistant.runs", "assistant.slack.posts")
        return received.metrics if all(name in received.metrics for name in wanted) else None

    found = otel.wait_for(metrics)
    tokens = {p["gen_ai.token.type"]: value for p, value in found["gen_ai.client.token.usage"]}
    assert tokens == {"input": (2, 2700), "output": (2, 75)}
    assert found["assistant.runs"] == [({"assistant.run.outcome": "finished"}, 1)]
    assert found["assistant.slack.posts"] == [({}, 1)]
