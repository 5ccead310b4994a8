"""A command whose reader goes away (a closed pipe) ends quietly: a real process, since the pipe
and the interpreter's exit are the point (tests/commands/test_validate_cli.py: the rest)."""

import os
import subprocess
import sys

from tests.cli import ROOT


def test_a_reader_that_goes_away_ends_the_command_quietly():
    """`assistant schema | head`: the pipe closes before everything is written."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # no reader at all: the first write fails
    try:
        result = subprocess.run(
            [sys.executable, "-m", "assistant.cli", "schema"],
            stdout=write_end,
            stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            timeout=60,
        )
    finally:
        os.close(write_end)
    assert result.returncode == 141
    assert result.stderr == b""
