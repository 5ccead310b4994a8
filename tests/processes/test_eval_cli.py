"""`assistant eval` on a terminal draws a progress bar: a real process on a pseudo-terminal (the
rest of the command, in process: tests/eval/test_eval_cli.py)."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

from assistant.fakes import ids
from assistant.fakes.openai import responses as replies
from tests.eval.logs import history_call, post_call

# The module's fixture: a saved thread's log file.
from tests.eval.test_eval_cli import log_file as log_file
from tests.process import clean_env, run_assistant


def test_a_terminal_gets_a_progress_bar(model, tmp_path, log_file):
    """On a terminal (a pseudo-terminal here), the bar with the set's count from its manifest."""
    saved = run_assistant("eval", str(log_file), "--save", "set", env=clean_env(), cwd=tmp_path)
    assert saved.returncode == 0, saved.stderr
    model.script(replies.tool_calls(history_call()), replies.tool_calls(post_call()))
    env = clean_env(OPENAI_API_KEY=ids.OPENAI_API_KEY, OPENAI_BASE_URL=model.base_url)
    leader, follower = pty.openpty()
    with subprocess.Popen(
        [sys.executable, "-m", "assistant.cli", "eval", "set", "--concurrency", "1"],
        stdout=subprocess.DEVNULL,
        stderr=follower,
        env=env,
        cwd=tmp_path,
    ) as process:
        os.close(follower)
        shown = b""
        while True:  # until the child's end closes the terminal
            try:
                data = os.read(leader, 4096)
            except OSError:  # EIO: every writer is gone
                break
            if not data:
                break
            shown += data
        assert process.wait(timeout=60) == 0
    os.close(leader)
    text = shown.decode("utf-8", "replace")
    assert f"[{'#' * 15}{'-' * 15}] 1/2 cases, 1 passed" in text
    assert f"[{'#' * 30}] 2/2 cases, 2 passed" in text
