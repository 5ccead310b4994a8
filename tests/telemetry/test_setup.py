"""Telemetry is opt-in by the SDK's own variables: without an OTLP endpoint nothing of
OpenTelemetry is imported; a protocol that cannot be used is one line."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from assistant.fakes import ids
from assistant.telemetry.setup import TelemetryError, open_providers, wanted
from tests.process import clean_env, run_assistant

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


def test_without_an_endpoint_no_opentelemetry_module_is_imported(tmp_path):
    script = (
        "import sys\n"
        "from assistant.app import create_assistant\n"
        "from assistant.serving.http import create_web_app\n"
        "from assistant.telemetry.start import open_telemetry\n"
        "assert open_telemetry('Aya', None) is None\n"
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, cwd=tmp_path, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("protocol", "said"),
    [
        ("grpc", "pip install opentelemetry-exporter-otlp-proto-grpc"),
        ("http/json", "'http/json' is not supported"),
    ],
)
def test_a_protocol_that_cannot_be_used_is_one_line(protocol, said):
    if protocol == "grpc" and _has_grpc_exporter():
        pytest.skip("the grpc exporter is installed: grpc is used")
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT, "OTEL_EXPORTER_OTLP_PROTOCOL": protocol}
    with pytest.raises(TelemetryError) as raised:
        open_providers(env)
    assert said in str(raised.value)
    assert "\n" not in str(raised.value)


def _has_grpc_exporter() -> bool:
    try:
        import opentelemetry.exporter.otlp.proto.grpc  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.parametrize("command", ["run", "serve"])
def test_the_bot_does_not_start_on_a_protocol_it_cannot_use(command, slack, tmp_path):
    if _has_grpc_exporter():
        pytest.skip("the grpc exporter is installed: grpc is used")
    env = clean_env(
        DATABASE_URL=f"sqlite:///{tmp_path / 'assistant.db'}",
        SLACK_BOT_TOKEN=ids.BOT_TOKEN,
        SLACK_APP_TOKEN=ids.APP_TOKEN,
        SLACK_SIGNING_SECRET=ids.SIGNING_SECRET,
        OPENAI_API_KEY=ids.OPENAI_API_KEY,
        SLACK_API_URL=slack.api_url,
        OTEL_EXPORTER_OTLP_ENDPOINT=ENDPOINT,
        OTEL_EXPORTER_OTLP_PROTOCOL="grpc",
    )
    result = run_assistant(command, env=env, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines() == [
        f"assistant {command}: OTEL_EXPORTER_OTLP_PROTOCOL=grpc needs the grpc exporter: "
        "pip install opentelemetry-exporter-otlp-proto-grpc"
    ]
