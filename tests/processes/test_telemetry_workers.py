"""The event→run link across processes (docs/architecture.md, "Telemetry"): the ingress
(`assistant serve --runs off`) records a mention under a `record message` span and stores its
trace context on the entry (migration 0013_trace_context); the worker (`assistant worker`) that
answers it, in another process, links its `invoke_agent` span to that span. Both export to
one loopback OTLP receiver; PostgreSQL only (the split roles need it)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from assistant.fakes import FakeOpenAI, FakeSlack
from bench import conversation
from bench.load import send_events
from bench.model import AnsweringModel
from bench.server import AppServer, Worker
from tests.app.test_telemetry import runs
from tests.otlp_receiver import OtlpReceiver, Received, Span

WAKE_TIMEOUT = 120.0  # the worker is woken by the ingress's NOTIFY; generous, for a busy machine


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    started = OtlpReceiver().start()
    yield started
    started.stop()


def exporting(receiver: OtlpReceiver, instance: str) -> dict[str, str]:
    """A process's OTEL_* variables: the receiver, short export delays (the test waits on
    what arrives), and the process named by its service instance."""
    return {
        "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint,
        "OTEL_SERVICE_NAME": "aya-test",
        "OTEL_RESOURCE_ATTRIBUTES": f"service.instance.id={instance}",
        "OTEL_BSP_SCHEDULE_DELAY": "20",
        "OTEL_METRIC_EXPORT_INTERVAL": "200",
    }


def test_the_workers_run_links_to_the_span_that_recorded_the_event_in_the_ingress(
    postgres_url, tmp_path, receiver
):
    model = AnsweringModel(one_call=True)
    with FakeSlack() as slack, FakeOpenAI(default=model) as fake:
        [made] = conversation.mentions(slack, 1, 1)
        with (
            Worker(slack, fake, tmp_path / "w", postgres_url, **exporting(receiver, "worker")),
            AppServer(
                slack, fake, tmp_path, runs="off", DATABASE_URL=postgres_url,
                **exporting(receiver, "ingress"),
            ) as ingress,
        ):  # fmt: skip
            [delivered] = send_events(ingress.url, [made.event], 1)
            assert delivered.status == 200
            conversation.wait_answered(slack, model, [made], timeout=WAKE_TIMEOUT)
            [run] = receiver.wait_for(runs)
            [recorded] = receiver.wait_for(recorded_spans)

    assert recorded.resource["service.instance.id"] == "ingress"
    assert recorded.attributes["slack.message.ts"] == made.event["ts"]
    assert run.resource["service.instance.id"] == "worker"
    assert run.links == [(recorded.trace_id, recorded.span_id)]
    assert run.trace_id != recorded.trace_id  # a trace of its own, linked, not a child
    # Only the worker ran, only the ingress recorded.
    where = {(s.name, s.resource["service.instance.id"]) for s in receiver.received.spans}
    assert ("record message", "worker") not in where
    assert not any(name.startswith("invoke_agent") for name, at in where if at == "ingress")


def recorded_spans(received: Received) -> list[Span]:
    return [s for s in received.spans if s.name == "record message"]
