"""Loopback OTLP receivers for the telemetry tests. `Collector` decodes the real protobuf
requests (`ExportTraceServiceRequest`, `ExportMetricsServiceRequest`, with opentelemetry-proto)
the app's exporters send and lets a test wait until what it expects has arrived (no sleeping);
`OtlpReceiver` takes them over OTLP/HTTP (a tiny HTTP server), `tests/otlp_grpc_receiver.py`
over gRPC."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

TIMEOUT = 60  # a wait on what arrives: generous, for a busy machine
T = TypeVar("T")


def value_of(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [value_of(item) for item in value.array_value.values]
    return getattr(value, kind) if kind else None


@dataclass(frozen=True)
class Span:
    name: str
    trace_id: str
    span_id: str
    parent_id: str
    kind: int
    attributes: dict[str, Any]
    links: list[tuple[str, str]]  # (trace id, span id)
    status_code: int
    resource: dict[str, Any]
    # (name, attributes) of each of its events, in order
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


@dataclass
class Received:
    spans: list[Span] = field(default_factory=list)
    # metric name -> [(attributes, value: a sum's or a histogram's count and sum)]
    metrics: dict[str, list[tuple[dict[str, Any], Any]]] = field(default_factory=dict)


class Collector:
    """What the receiver has been sent, decoded; `endpoint` is set by the receiver."""

    endpoint: str

    def __init__(self) -> None:
        self.received = Received()
        self._changed = threading.Condition()

    def traces(self, request: ExportTraceServiceRequest) -> None:
        spans = []
        for resource_spans in request.resource_spans:
            resource = {a.key: value_of(a.value) for a in resource_spans.resource.attributes}
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    spans.append(
                        Span(
                            name=span.name,
                            trace_id=span.trace_id.hex(),
                            span_id=span.span_id.hex(),
                            parent_id=span.parent_span_id.hex(),
                            kind=span.kind,
                            attributes={a.key: value_of(a.value) for a in span.attributes},
                            links=[(ln.trace_id.hex(), ln.span_id.hex()) for ln in span.links],
                            status_code=span.status.code,
                            resource=resource,
                            events=[
                                (e.name, {a.key: value_of(a.value) for a in e.attributes})
                                for e in span.events
                            ],
                        )
                    )
        with self._changed:
            self.received.spans += spans
            self._changed.notify_all()

    def metrics(self, request: ExportMetricsServiceRequest) -> None:
        found: dict[str, list[tuple[dict[str, Any], Any]]] = {}
        for resource_metrics in request.resource_metrics:
            for scope_metrics in resource_metrics.scope_metrics:
                for metric in scope_metrics.metrics:
                    kind = metric.WhichOneof("data")
                    for point in getattr(metric, kind).data_points:
                        attributes = {a.key: value_of(a.value) for a in point.attributes}
                        if kind == "histogram":
                            value: Any = (point.count, point.sum)
                        else:
                            value = point.as_int if point.HasField("as_int") else point.as_double
                        found.setdefault(metric.name, []).append((attributes, value))
        with self._changed:
            # Cumulative temporality: the latest export holds every point so far.
            self.received.metrics.update(found)
            self._changed.notify_all()

    def wait_for(self, what: Callable[[Received], T | None], timeout: float = TIMEOUT) -> T:
        """Until `what` of what has arrived is neither None nor empty; its value."""

        def arrived() -> bool:
            return what(self.received) not in (None, [])

        with self._changed:
            ok = self._changed.wait_for(arrived, timeout)
            assert ok, f"the receiver did not get what was expected: {self.received}"
            result = what(self.received)
            assert result is not None
            return result


class OtlpReceiver(Collector):
    """OTLP/HTTP (http/protobuf): POST /v1/traces and /v1/metrics."""

    def __init__(self) -> None:
        super().__init__()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                if self.path == "/v1/traces":
                    receiver.traces(ExportTraceServiceRequest.FromString(body))
                    answer = ExportTraceServiceResponse().SerializeToString()
                elif self.path == "/v1/metrics":
                    receiver.metrics(ExportMetricsServiceRequest.FromString(body))
                    answer = ExportMetricsServiceResponse().SerializeToString()
                else:
                    self.send_response(404)
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def start(self) -> OtlpReceiver:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


class HungCollector:
    """An OTLP/HTTP collector that accepts each request, reads it, and never answers: what a
    collector behind a stuck proxy does. `overlapped` is set once a traces request and a
    metrics request are waiting at the same time (each counted until its client hangs up)."""

    def __init__(self) -> None:
        self.overlapped = threading.Event()
        self._waiting: dict[str, int] = {}
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length", 0)))
                collector._changed(self.path, +1)
                try:
                    # Until the client gives up and closes the connection, or the test ends.
                    while not collector._stopping.is_set() and self.connection.recv(1):
                        pass
                except OSError:
                    pass
                finally:
                    collector._changed(self.path, -1)
                self.close_connection = True

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def _changed(self, path: str, by: int) -> None:
        with self._lock:
            self._waiting[path] = self._waiting.get(path, 0) + by
            if self._waiting.get("/v1/traces", 0) and self._waiting.get("/v1/metrics", 0):
                self.overlapped.set()

    def __enter__(self) -> HungCollector:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
