"""The SDK, built only when an OTLP endpoint is set: a TracerProvider with a
BatchSpanProcessor (its queue bounded, `OTEL_BSP_*`), a MeterProvider with a
PeriodicExportingMetricReader (`OTEL_METRIC_EXPORT_INTERVAL`), and the OTLP exporters
(http/protobuf, or grpc when `OTEL_EXPORTER_OTLP_PROTOCOL` asks and its package is installed).
Every other `OTEL_*` variable is read by the SDK itself: service name and resource, headers,
timeout, sampler. No providers are set globally: each app has its own (tests run several).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from context.urls import shown_url

log = logging.getLogger(__name__)

DEFAULT_SERVICE = "slack-context-assistant"
# A stop's time for what is queued to be sent, both providers together: within the 10 s a stop
# takes (docs/operations.md, "Operations"), whatever OTEL_EXPORTER_OTLP_TIMEOUT says.
SHUTDOWN_SECONDS = 5.0
# The SDK's exporters log every failed batch; `Unreachable` says it once instead.
_EXPORTER_LOGGERS = (
    "opentelemetry.exporter.otlp.proto.http.trace_exporter",
    "opentelemetry.exporter.otlp.proto.http.metric_exporter",
    "opentelemetry.exporter.otlp.proto.grpc.exporter",
    "opentelemetry.exporter.otlp.proto.http._common",
    "opentelemetry.exporter.http.transport",
)


class TelemetryError(Exception):
    """The OTEL_* variables ask for what cannot be done; the message is one line."""


def wanted(env: Mapping[str, str] = os.environ) -> bool:
    """Whether traces are asked for: an OTLP endpoint is set (and the SDK not disabled)."""
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    endpoints = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    return any(env.get(name) for name in endpoints)


def _protocol(env: Mapping[str, str], signal: str) -> str:
    name = f"OTEL_EXPORTER_OTLP_{signal}_PROTOCOL"
    return (env.get(name) or env.get("OTEL_EXPORTER_OTLP_PROTOCOL") or "http/protobuf").strip()


def _exporters(env: Mapping[str, str], signal: str) -> Any:
    """The OTLP exporter class of `signal` ("TRACES" or "METRICS") for the protocol asked."""
    protocol = _protocol(env, signal)
    if protocol == "http/protobuf":
        if signal == "TRACES":
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            return OTLPSpanExporter
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

        return OTLPMetricExporter
    if protocol == "grpc":
        try:
            if signal == "TRACES":
                from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
                    OTLPSpanExporter as GrpcSpans,
                )

                return GrpcSpans
            from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import (
                OTLPMetricExporter as GrpcMetrics,
            )

            return GrpcMetrics
        except ImportError:
            raise TelemetryError(
                "OTEL_EXPORTER_OTLP_PROTOCOL=grpc needs the grpc exporter: "
                "pip install opentelemetry-exporter-otlp-proto-grpc"
            ) from None
    raise TelemetryError(
        f"OTLP protocol {protocol!r} is not supported: use http/protobuf (the default) or grpc"
    )


class Unreachable:
    """One log line when the collector cannot take a batch, one when it takes them again
    (not one per batch); the exporter's own lines are kept quiet."""

    def __init__(self, where: str) -> None:
        self._where = where
        self._failing = False
        self._lock = threading.Lock()
        for name in _EXPORTER_LOGGERS:
            logging.getLogger(name).setLevel(logging.CRITICAL)

    def outcome(self, ok: bool) -> None:
        with self._lock:
            changed, self._failing = self._failing == ok, not ok
        if changed and not ok:
            log.warning(
                "the OpenTelemetry collector at %s did not take the telemetry; it is dropped "
                "until it does (runs go on)",
                self._where,
            )
        elif changed:
            log.info("the OpenTelemetry collector at %s takes the telemetry again", self._where)


def _watched_spans(exporter: Any, unreachable: Unreachable) -> Any:
    """The span exporter, telling `unreachable` how each batch went."""
    from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

    class Watched(SpanExporter):
        def export(self, spans: Sequence[Any]) -> SpanExportResult:
            result: SpanExportResult = exporter.export(spans)
            unreachable.outcome(result is SpanExportResult.SUCCESS)
            return result

        def shutdown(self) -> None:
            exporter.shutdown()

        def force_flush(self, timeout_millis: int = 30000) -> bool:
            flushed: bool = exporter.force_flush(timeout_millis)
            return flushed

    return Watched()


def _watched_metrics(exporter: Any, unreachable: Unreachable) -> Any:
    from opentelemetry.sdk.metrics.export import MetricExportResult

    export: Callable[..., MetricExportResult] = exporter.export

    def watched(metrics_data: Any, timeout_millis: float = 10_000, **kwargs: Any) -> Any:
        result = export(metrics_data, timeout_millis=timeout_millis, **kwargs)
        unreachable.outcome(result is MetricExportResult.SUCCESS)
        return result

    exporter.export = watched
    return exporter


def check(env: Mapping[str, str] = os.environ) -> None:
    """Raise TelemetryError now if the exporters asked for cannot be built (before a server
    starts, where it would be a traceback); nothing is imported when telemetry is off."""
    if wanted(env):
        _exporters(env, "TRACES")
        _exporters(env, "METRICS")


@dataclass(frozen=True)
class Providers:
    tracer_provider: Any  # opentelemetry.sdk.trace.TracerProvider
    meter_provider: Any | None  # None: metrics not exported
    where: str = ""  # the collector, as output shows it (`shown_url`)

    def shutdown(self, deadline: float = SHUTDOWN_SECONDS) -> bool:
        """Export what is queued, then stop: both providers at once, each in a thread of its
        own, within one `deadline` (seconds) for the two. One after the other, a collector
        that accepts and never answers cost each its whole exporter timeout (10 s by
        default): a stop took 20 s. What is not sent by the deadline is dropped, with one
        line; False then."""
        parts = [self.tracer_provider]
        if self.meter_provider is not None:
            parts.append(self.meter_provider)
        threads = [
            threading.Thread(target=part.shutdown, name=f"otel-{type(part).__name__}", daemon=True)
            for part in parts
        ]
        for thread in threads:
            thread.start()
        ends = time.monotonic() + deadline
        for thread in threads:
            thread.join(max(0.0, ends - time.monotonic()))
        if any(thread.is_alive() for thread in threads):
            log.warning(
                "the OpenTelemetry collector at %s did not take what was queued within %g s; "
                "it is dropped",
                self.where,
                deadline,
            )
            return False
        return True


def open_providers(env: Mapping[str, str] = os.environ) -> Providers:
    """The SDK's providers, exporting by OTLP as the OTEL_* variables say. Raises
    TelemetryError (one line) for a protocol that cannot be used."""
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    resource = Resource.create()
    if str(resource.attributes.get(SERVICE_NAME, "")).startswith("unknown_service"):
        resource = resource.merge(Resource({SERVICE_NAME: DEFAULT_SERVICE}))
    where = env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or env["OTEL_EXPORTER_OTLP_ENDPOINT"]
    unreachable = Unreachable(shown_url(where))
    spans = _watched_spans(_exporters(env, "TRACES")(), unreachable)
    # The sampler: OTEL_TRACES_SAMPLER. Not shut down at exit: `Providers.shutdown` does it,
    # within its deadline (the SDK's exit hook would start a second, unbounded one).
    tracer_provider = TracerProvider(resource=resource, shutdown_on_exit=False)
    tracer_provider.add_span_processor(BatchSpanProcessor(spans))
    meter_provider = None
    metrics_endpoint = env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or env.get(
        "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"
    )
    if metrics_endpoint and env.get("OTEL_METRICS_EXPORTER", "otlp").strip() != "none":
        exporter = _watched_metrics(_exporters(env, "METRICS")(), unreachable)
        reader = PeriodicExportingMetricReader(exporter)
        meter_provider = MeterProvider(
            resource=resource, metric_readers=[reader], shutdown_on_exit=False
        )
    return Providers(tracer_provider, meter_provider, shown_url(where))
