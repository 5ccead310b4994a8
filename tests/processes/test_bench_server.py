"""bench/server.py's app process on a loopback port: a port taken between `free_port` and the
app's bind (a busy machine) means a start on another, not a failed benchmark or test."""

from __future__ import annotations

import socket
import urllib.request

import bench.server
from bench.server import AppServer
from tests.harness import TIMEOUT


def test_an_app_whose_port_was_taken_meanwhile_starts_on_another(
    monkeypatch, slack, model, tmp_path
):
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        taken = holder.getsockname()[1]
        ports = iter([taken])  # the first port the app is given is somebody else's by then
        free = bench.server.free_port
        monkeypatch.setattr(bench.server, "free_port", lambda: next(ports, None) or free())
        with AppServer(slack, model, tmp_path) as app:
            assert app.port != taken
            with urllib.request.urlopen(f"{app.url}/healthz", timeout=TIMEOUT) as answer:
                assert answer.status == 200
