import io
import os
import pty
import subprocess
import sys

from context.canonical import load_log
from context.entry import UserContent
from context.log import ContextLog
from context.render import render_entry, render_log
from context.toolcalls import FinishRequest, GetThreadHistory, PostMessage
from context.trace import TraceWriter
from tests.cli import DATA, ROOT, run_cli

SEED = (DATA / "aya-lunch.json").read_bytes()
EXPECTED = (DATA / "aya-lunch.console.txt").read_bytes()


def test_show_prints_the_golden_trace_byte_for_byte():
    result = run_cli("show", str(DATA / "aya-lunch.json"))
    assert result.returncode == 0, result.stderr
    assert result.stdout == EXPECTED
    assert b"\x1b[" not in result.stdout


def test_show_reads_standard_input():
    result = run_cli("show", "-", stdin=SEED)
    assert result.returncode == 0, result.stderr
    assert result.stdout == EXPECTED


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


def test_live_trace_equals_saved_rendering():
    log = load_log(SEED)
    stream = io.StringIO()
    writer = TraceWriter(stream)
    for entry in log.entries:
        writer.write(entry)
    assert stream.getvalue() == render_log(log.entries) == EXPECTED.decode()


def test_multiline_text_and_other_tools():
    log = ContextLog()
    log.append("line one\nline two", "2025-01-01T00:00:00Z")
    log.append(UserContent(userid="<@U1>", text="first\nsecond"), "2025-01-01T00:00:01Z")
    log.append(GetThreadHistory(ascending=True, limit=20), "2025-01-01T00:00:02Z")
    log.append(PostMessage(text="a\nb", reasoning="why\nbecause"), "2025-01-01T00:00:03Z")
    log.append(FinishRequest(), "2025-01-01T00:00:04Z")
    blocks = [render_entry(e) for e in log.entries]
    assert blocks[0] == "🧠 System: line one\n   line two"
    assert blocks[1].endswith("> first\n> second")
    assert "🔧 getThreadHistory (ascending: true, limit: 20)" in blocks[2]
    assert "└─ Reason" not in blocks[2]
    assert blocks[3].endswith('💬 postMessage:\n   "a\n   b"\n   └─ Reason: why\n   because')
    assert blocks[4] == "🤖 Assistant [Turn 1]\n🕐 2025-01-01T00:00:04Z\n✅ finishRequest"
