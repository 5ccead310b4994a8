"""`assistant validate` and `assistant show` on a long saved log (issue 43, point 17: a 57 MiB
log took 12 s and about 1 GB): each command's wall time and its peak memory (the child's own
`ru_maxrss`, from `os.wait4`), beside `assistant --version`'s (the interpreter and the CLI's
imports alone).

The log is written once, valid, as `assistant export` writes one: a persona, then rounds of a
question, a post and its `finishRequest`, each entry a few hundred bytes, to 57 MiB (--smoke:
1 MiB). `show` writes its trace to /dev/null. The CPU time (user + system) is the figure to
compare on a shared machine: the wall time grows with the others' load.

`BENCH_BIG_LOG_CODE=DIR` runs the commands of another copy of the code (`python -m
assistant.cli` in DIR, which comes first on the path): e.g. `git archive COMMIT | tar -x -C
DIR` for the figures before a change, in the same run of the machine.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from tempfile import TemporaryDirectory

from bench.report import Figure
from context.entry import Content, UserContent, make_entry, role_of
from context.log import Tail
from context.toolcalls import FinishRequest, PostMessage
from tests.cli import ROOT
from tests.process import clean_env

FULL_MIB, SMOKE_MIB = 57, 1
CODE = Path(os.environ.get("BENCH_BIG_LOG_CODE") or ROOT)
STAMP = "2025-04-04T12:33:00Z"


def write_log(path: Path, size: int) -> int:
    """A valid log of at least `size` bytes at `path`; the number of its entries."""
    contents: list[Content] = [
        UserContent(userid="<@U0ASKER01>", text="Where does the release stand? " * 8),
        PostMessage(
            text="Here is where it stands: " + "the migration is reviewed; " * 12,
            reasoning="Summing up the thread",
        ),
        FinishRequest(reasoning="Answered"),
    ]
    tail, written, count = Tail(), 0, 0
    with path.open("w", encoding="utf-8") as out:
        out.write("[")
        while written < size:
            content: Content = (
                "You are Aya, a helpful assistant." if count == 0 else contents[(count - 1) % 3]
            )
            index, turn, tail = tail.place(role_of(content))
            text = ("\n" if count == 0 else ",\n") + make_entry(
                index, turn, STAMP, content
            ).canonical_json()
            out.write(text)
            written += len(text.encode())
            count += 1
        out.write("\n]\n")
    return count


def measured(*args: str) -> tuple[float, float, int, int]:
    """`assistant ARGS` in its own process: (seconds, CPU seconds, peak RSS in KiB, exit
    status)."""
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "assistant.cli", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=clean_env(),
        cwd=CODE,
    )
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.stderr is not None:
        process.stderr.close()
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, process.returncode


def code_measured() -> str:
    """The commit whose code ran, and whether the tree had changes to it."""
    if CODE != ROOT:
        return f"the copy in {CODE}"
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "diff", "--quiet", "HEAD", "--", "context", "assistant"], cwd=ROOT, check=False
    ).returncode
    return f"{head or 'unknown'}{' with uncommitted changes' if dirty else ''}"


def run(smoke: bool = False) -> list[Figure]:
    size = (SMOKE_MIB if smoke else FULL_MIB) * 1024 * 1024
    with TemporaryDirectory() as directory:
        path = Path(directory) / "long.json"
        count = write_log(path, size)
        mib = path.stat().st_size / 1024 / 1024
        figures = [
            Figure("code measured", code_measured()),
            Figure("log", f"{mib:.1f} MiB, {count:,} entries"),
        ]
        for command in ("--version", "validate", "show"):
            args = [command] if command == "--version" else [command, str(path)]
            seconds, cpu, peak, status = measured(*args)
            figures += [
                Figure(f"{command}: exit status", str(status), "0", status == 0),
                Figure(f"{command}: wall time / CPU time", f"{seconds:.2f} s / {cpu:.2f} s"),
                Figure(f"{command}: peak RSS", f"{peak / 1024:.0f} MiB"),
            ]
    return figures
