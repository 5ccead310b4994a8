"""A loopback OTLP/gRPC receiver for the telemetry tests: a grpcio server on 127.0.0.1 serving
opentelemetry-proto's generated TraceService and MetricsService, which hand it the decoded
protobuf requests; what they hold is kept and waited on as the OTLP/HTTP receiver does
(`Collector`, tests/otlp_receiver.py). Plain text, as `OTEL_EXPORTER_OTLP_INSECURE=true` asks."""

from __future__ import annotations

from concurrent import futures
from typing import Any

import grpc
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2_grpc
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from tests.otlp_receiver import Collector


class _Traces(trace_service_pb2_grpc.TraceServiceServicer):
    def __init__(self, collector: Collector) -> None:
        self._collector = collector

    def Export(self, request: ExportTraceServiceRequest, context: Any) -> Any:
        self._collector.traces(request)
        return ExportTraceServiceResponse()


class _Metrics(metrics_service_pb2_grpc.MetricsServiceServicer):
    def __init__(self, collector: Collector) -> None:
        self._collector = collector

    def Export(self, request: ExportMetricsServiceRequest, context: Any) -> Any:
        self._collector.metrics(request)
        return ExportMetricsServiceResponse()


class GrpcOtlpReceiver(Collector):
    """`endpoint` is host:port, the grpc exporter's form (no scheme, no path)."""

    def __init__(self) -> None:
        super().__init__()
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        trace_service_pb2_grpc.add_TraceServiceServicer_to_server(_Traces(self), self._server)
        metrics_service_pb2_grpc.add_MetricsServiceServicer_to_server(_Metrics(self), self._server)
        port = self._server.add_insecure_port("127.0.0.1:0")
        self.endpoint = f"127.0.0.1:{port}"

    def start(self) -> GrpcOtlpReceiver:
        self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop(grace=None).wait()
