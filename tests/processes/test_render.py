"""`assistant show` colours only on a terminal: a real process on a pseudo-terminal (the
renderer itself: tests/context/test_render.py)."""

import os
import pty
import subprocess
import sys

from tests.cli import DATA, ROOT


def test_show_uses_colour_only_on_a_terminal():
    leader, follower = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "assistant.cli", "show", str(DATA / "aya-lunch.json")],
        stdout=follower,
        stderr=subprocess.PIPE,
        env=env,
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closes when the process exits
            break
        if not chunk:
            break
        chunks.append(chunk)
    assert proc.wait(timeout=30) == 0
    os.close(leader)
    output = b"".join(chunks)
    assert b"\x1b[1m" in output
    assert "Oi, me dê uma sugestão".encode() in output
