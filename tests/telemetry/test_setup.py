"""Telemetry is opt-in by the SDK's own variables: without an OTLP endpoint nothing of
OpenTelemetry is imported; a protocol that cannot be used is one line, grpc without its extra
too (simulated: the extra is installed for the tests, tests/app/test_telemetry_grpc.py)."""

from __future__ import annotations

import logging
import socket
import threading

import pytest

from assistant.telemetry.setup import SHUTDOWN_SECONDS, TelemetryError, open_providers, wanted
from tests.otlp_receiver import HungCollector

ENDPOINT = "http://127.0.0.1:4318"


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, False),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT}, True),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"{ENDPOINT}/v1/traces"}, True),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT, "OTEL_SDK_DISABLED": "true"}, False),
        ({"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": ENDPOINT}, False),  # traces first
    ],
)
def test_telemetry_is_wanted_only_with_an_otlp_endpoint(env, expected):
    assert wanted(env) is expected


def test_the_unsupported_protocol_is_one_line():
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT, "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}
    with pytest.raises(TelemetryError) as raised:
        open_providers(env)
    assert str(raised.value) == (
        "OTLP protocol 'http/json' is not supported: use http/protobuf (the default) or grpc"
    )


def test_the_collectors_warning_names_its_scheme_host_and_port_only(monkeypatch, caplog):
    secret = "collector-key-never-shown"
    with socket.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    monkeypatch.setenv(
        "OTEL_EXPORTER_OTLP_ENDPOINT", f"http://aya:{secret}@127.0.0.1:{port}/{secret}"
    )
    monkeypatch.setenv("OTEL_METRICS_EXPORTER", "none")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "1")
    caplog.set_level(logging.INFO)
    providers = open_providers()
    with providers.tracer_provider.get_tracer("test").start_as_current_span("a span"):
        pass
    providers.shutdown()  # the span is exported, or fails to be, before it returns
    lines = [r.getMessage() for r in caplog.records if r.name.startswith("assistant.telemetry")]
    assert lines == [
        f"the OpenTelemetry collector at http://127.0.0.1:{port} did not take the telemetry; "
        "it is dropped until it does (runs go on)"
    ]
    assert secret not in caplog.text


def test_a_hung_collector_costs_one_deadline_for_both_providers(monkeypatch, caplog):
    """Both providers' shutdowns run at once: the metrics export reaches the collector while
    the traces export still waits on it (one after the other, each waited its whole exporter
    timeout: a stop took 20 s). And the stop gives up at its deadline, not the exporter's."""
    with HungCollector() as hung:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", hung.endpoint)
        # Longer than a stop may take: only the deadline can end the shutdown in time.
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "60")
        monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "600000")  # sent at shutdown only
        monkeypatch.setenv("OTEL_METRIC_EXPORT_INTERVAL", "600000")
        providers = open_providers()
        with providers.tracer_provider.get_tracer("test").start_as_current_span("a span"):
            pass
        providers.meter_provider.get_meter("test").create_counter("stops").add(1)
        outcome: list[bool] = []
        stopping = threading.Thread(target=lambda: outcome.append(providers.shutdown()))
        stopping.start()
        assert hung.overlapped.wait(SHUTDOWN_SECONDS * 4), "one export waited for the other"
        stopping.join(SHUTDOWN_SECONDS * 4)  # generous, and well under the exporters' 60 s
        assert not stopping.is_alive()
        assert outcome == [False]
    lines = [r.getMessage() for r in caplog.records if r.name.startswith("assistant.telemetry")]
    assert lines[-1] == (
        f"the OpenTelemetry collector at {hung.endpoint} did not take what was queued within "
        f"{SHUTDOWN_SECONDS:g} s; it is dropped"
    )
