"""Running the real `assistant` command in a subprocess, as a user would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"


def run_cli(
    *args: str,
    stdin: bytes | None = None,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[bytes]:
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    result = subprocess.run(
        [sys.executable, "-m", "assistant.cli", *args],
        input=stdin,
        capture_output=True,
        env=full_env,
        cwd=cwd or ROOT,
        timeout=300,  # a command run to its end, its interpreter started under load too
    )
    show_output(result.stdout.decode("utf-8", "replace"), result.stderr.decode("utf-8", "replace"))
    return result


def show_output(stdout: str, stderr: str) -> None:
    """Pass a subprocess's output on to pytest's capture, where the secret check reads it."""
    sys.stdout.write(stdout)
    sys.stderr.write(stderr)
