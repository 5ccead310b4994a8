"""Telemetry as a fresh interpreter sees it: without an OTLP endpoint nothing of OpenTelemetry
is imported; grpc without its extra is one line, and the bot does not start (the rest:
tests/telemetry/test_setup.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from assistant.fakes import ids
from tests.cli import ROOT
from tests.process import clean_env, run_assistant_process
from tests.telemetry.test_setup import ENDPOINT


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


GRPC_EXPORTER = "opentelemetry.exporter.otlp.proto.grpc"


MISSING = (
    "OTEL_EXPORTER_OTLP_PROTOCOL=grpc needs the grpc exporter: "
    "pip install opentelemetry-exporter-otlp-proto-grpc"
)


def without_the_grpc_exporter(tmp_path: Path) -> str:
    """A PYTHONPATH whose sitecustomize makes the grpc exporter unimportable, as when the
    `grpc` extra is not installed (a None in sys.modules: ImportError on importing it)."""
    blocker = tmp_path / "no_grpc"
    blocker.mkdir()
    blocked = f"import sys\nsys.modules[{GRPC_EXPORTER!r}] = None\n"
    (blocker / "sitecustomize.py").write_text(blocked)
    return os.pathsep.join([str(blocker), str(ROOT)])


def test_grpc_without_its_extra_is_one_line(tmp_path):
    script = (
        "from assistant.telemetry.setup import TelemetryError, open_providers\n"
        f"env = {{'OTEL_EXPORTER_OTLP_ENDPOINT': {ENDPOINT!r}, "
        "'OTEL_EXPORTER_OTLP_PROTOCOL': 'grpc'}\n"
        "try:\n"
        "    open_providers(env)\n"
        "except TelemetryError as exc:\n"
        "    print(exc)\n"
    )
    env = clean_env(PYTHONPATH=without_the_grpc_exporter(tmp_path))
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, cwd=tmp_path, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [MISSING]


@pytest.mark.parametrize("command", ["run", "serve"])
def test_the_bot_does_not_start_without_the_grpc_extra(command, slack, tmp_path):
    env = clean_env(
        DATABASE_URL=f"sqlite:///{tmp_path / 'assistant.db'}",
        SLACK_BOT_TOKEN=ids.BOT_TOKEN,
        SLACK_APP_TOKEN=ids.APP_TOKEN,
        SLACK_SIGNING_SECRET=ids.SIGNING_SECRET,
        OPENAI_API_KEY=ids.OPENAI_API_KEY,
        SLACK_API_URL=slack.api_url,
        OTEL_EXPORTER_OTLP_ENDPOINT=ENDPOINT,
        OTEL_EXPORTER_OTLP_PROTOCOL="grpc",
        PYTHONPATH=without_the_grpc_exporter(tmp_path),
    )
    result = run_assistant_process(command, env=env, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines() == [f"assistant {command}: {MISSING}"]
