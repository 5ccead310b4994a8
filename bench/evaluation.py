"""`assistant eval` at scale: an eval set of 10,000 cases (1,000 logs of 10 decisions each)
run as an operator would (the real command, a subprocess, `--concurrency 8`, with `--json`,
`--report` and `--save-run`, so every result is written out and the run kept) against the fake
model answering at once, in this process; then the saved run scored again (`eval rescore`) and
compared with itself (`eval diff`), neither asking the model. Every run is also kept in a
SQLite store (the default of `assistant eval`: `DATABASE_URL` names one), and the large run
compared with itself by its id there too. Figures: cases a second (goal:
at least 50 on 2 cores), the command's CPU a case, and its memory: peak RSS, and the RSS
sampled from /proc while it runs, at 10,000 cases against 1,000 (goal: bounded, the cases
read from disk a log at a time and the results spooled and saved to disk: at most 64 MiB more
for 10 times the cases); the saved run's size on disk and in the store, and the peak RSS of
rescore and diff on it. Then trajectory cases (`--trajectory`, 1,000 answers of a history
read, a post and a finish) against a fake model that reads the thread first and then answers:
model steps a second, each step the run's own agent loop on the eval's scratch store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from assistant.eval.cases import cases_of
from assistant.eval.sets import SetWriter
from assistant.eval.trajectory import trajectory_cases
from assistant.fakes import ids
from assistant.fakes.openai import responses as replies
from assistant.fakes.openai.responses import Response
from assistant.fakes.openai.server import FakeOpenAI
from bench.report import Figure
from context.entry import UserContent
from context.log import ContextLog
from context.storage import open_store
from context.toolcalls import FinishRequest, GetThreadHistory, PostMessage

FULL = {"logs": 1_000, "small": 100, "paths": 100}
SMOKE = {"logs": 20, "small": 2, "paths": 2}
DECISIONS = 10  # per log: a question, then a post and a finish (one decision), ten times
GOAL_RATE = 50.0
GOAL_GROWTH_MIB = 64
SAMPLE_SECONDS = 0.1
STORE = "store.db"  # where every run is kept, as `assistant eval` keeps it by default
ROOT = Path(__file__).resolve().parent.parent


def write_set(directory: Path, logs: int) -> int:
    writer = SetWriter(directory)
    for number in range(logs):
        log = ContextLog()
        log.append("You are Aya, a helpful assistant.", "2025-04-04T12:00:00Z")
        for turn in range(DECISIONS):
            question = f"Question {turn} of thread {number}: what should we check before we ship?"
            log.append(UserContent(userid="<@U0BENCH01>", text=question), "2025-04-04T12:01:00Z")
            answer = "Before shipping, check the migration, the rollback and who is on call. " * 4
            log.append(PostMessage(text=answer, reasoning="Listing checks"), "2025-04-04T12:02:00Z")
            log.append(FinishRequest(reasoning="Answered"), "2025-04-04T12:03:00Z")
        entries = list(log.entries)
        writer.add(f"bench-{number}", entries, list(cases_of(f"bench-{number}", entries)))
    writer.finish()
    return writer.cases


def write_trajectory_set(directory: Path, logs: int) -> int:
    """Logs of ten answers each: a question, a history read and its result, a post, a finish;
    a trajectory case per answer."""
    writer = SetWriter(directory)
    for number in range(logs):
        log = ContextLog()
        log.append("You are Aya, a helpful assistant.", "2025-04-04T12:00:00Z")
        for turn in range(DECISIONS):
            question = f"Question {turn} of thread {number}: where does the release stand?"
            log.append(UserContent(userid="<@U0BENCH01>", text=question), "2025-04-04T12:01:00Z")
            log.append(GetThreadHistory(reasoning="Context first"), "2025-04-04T12:02:00Z")
            history = f"Thread history (1 message):\n<@U0BENCH01>: {question}"
            log.append(history, "2025-04-04T12:02:01Z")
            answer = "The migration is approved; we ship on Thursday after the rollback check."
            log.append(PostMessage(text=answer, reasoning="Summing up"), "2025-04-04T12:03:00Z")
            log.append(FinishRequest(reasoning="Answered"), "2025-04-04T12:04:00Z")
        entries = list(log.entries)
        writer.add(f"path-{number}", entries, list(trajectory_cases(f"path-{number}", entries)))
    writer.finish()
    return writer.cases


def reads_then_answers(body: dict[str, Any]) -> Response:
    """The fake model of a trajectory: a person's message last in the log, it reads the thread;
    else it posts and finishes."""
    log = json.loads(body["messages"][1]["content"])
    if log and log[-1]["role"] == "user":
        return replies.tool_calls(("getThreadHistory", {"reasoning": "Context first"}))
    return replies.tool_calls(
        ("postMessage", {"text": "Approved; we ship on Thursday.", "reasoning": "r"}),
        ("finishRequest", {"reasoning": "done"}),
    )


def run_eval(
    directory: Path, model: FakeOpenAI, out: Path, args: list[str] | None = None
) -> tuple[float, float, float, float]:
    """(wall seconds, CPU seconds, peak RSS, RSS late in the run, both in MiB) of one
    `assistant eval` run (`args`: instead of a run of the set in `directory`, saved in
    `out/run-NAME`), kept in the store `out/store.db` too. The peak is mostly the start (the
    tokenizer's tables); the RSS sampled while it runs is what the cases add."""
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ASSISTANT_"))},
        "PYTHONPATH": str(ROOT),
        "OPENAI_API_KEY": ids.OPENAI_API_KEY,
        "OPENAI_BASE_URL": model.base_url,
        "OPENAI_MAX_RETRIES": "0",
        "DATABASE_URL": f"sqlite:///{out / STORE}",
    }
    command = [sys.executable, "-m", "assistant.cli", "eval"]
    if args is None:
        command += [str(directory), "--yes", "--save-run", str(out / f"run-{directory.name}")]
        command += ["--concurrency", "8", "--json", "--report", str(out / "eval.md")]
    else:
        command += args
    started = time.perf_counter()
    with tempfile.TemporaryFile("w+") as errors, (out / "eval.json").open("w") as results:
        process = subprocess.Popen(command, env=env, stdout=results, stderr=errors)
        late = high = 0.0
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            late = _rss_mib(process.pid) or late
            high = _rss_mib(process.pid, "VmHWM:") or high
            time.sleep(SAMPLE_SECONDS)  # a bench's sampling interval, not a wait on a result
        wall = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode not in (0, 1) or (process.returncode == 1 and args is None):
            errors.seek(0)
            raise RuntimeError(
                f"assistant eval exited {process.returncode}: {errors.read()[-2000:]}"
            )
    # ru_maxrss counts what the child was before its exec: a copy of this process, which
    # grows with the fake's requests. VmHWM, read while it runs, is the command's own.
    peak_mib = high or usage.ru_maxrss / 1024  # kilobytes on Linux
    return wall, usage.ru_utime + usage.ru_stime, peak_mib, late


def _rss_mib(pid: int, field: str = "VmRSS:") -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError):
        return None
    return None


def run(smoke: bool) -> list[Figure]:
    sizes = SMOKE if smoke else FULL
    answer = replies.tool_calls(
        ("postMessage", {"text": "Check the migration and the rollback.", "reasoning": "r"}),
        ("finishRequest", {"reasoning": "done"}),
    )
    with (
        tempfile.TemporaryDirectory(prefix="bench-eval-") as scratch,
        FakeOpenAI(default=answer) as model,
    ):
        small, large = Path(scratch) / "small", Path(scratch) / "large"
        open_store(f"sqlite:///{Path(scratch) / STORE}").close()
        small_cases = write_set(small, sizes["small"])
        large_cases = write_set(large, sizes["logs"])
        _, _, small_peak, small_late = run_eval(small, model, Path(scratch))
        wall, cpu, large_peak, large_late = run_eval(large, model, Path(scratch))
        stored_mib = sum(f.stat().st_size for f in Path(scratch).glob(f"{STORE}*")) / 2**20
        saved = str(Path(scratch) / "run-large")
        report = str(Path(scratch) / "again.md")
        rescore = ["rescore", saved, "--json", "--report", report]
        rescore_wall, _, rescore_peak, _ = run_eval(large, model, Path(scratch), rescore)
        diff = ["diff", saved, saved, "--json", "--report", report]
        diff_wall, _, diff_peak, _ = run_eval(large, model, Path(scratch), diff)
        # The small run is 1 in the store, the large one 2.
        by_id = ["diff", "2", "2", "--json", "--report", report]
        id_wall, _, id_peak, _ = run_eval(large, model, Path(scratch), by_id)
        saved_mib = sum(f.stat().st_size for f in Path(saved).rglob("*") if f.is_file()) / 2**20
    with (
        tempfile.TemporaryDirectory(prefix="bench-eval-paths-") as scratch,
        FakeOpenAI(default=reads_then_answers) as path_model,
    ):
        paths = Path(scratch) / "paths"
        path_cases = write_trajectory_set(paths, sizes["paths"])
        command = [str(paths), "--trajectory", "--yes", "--concurrency", "8", "--json"]
        command += ["--save-run", str(Path(scratch) / "run-paths")]
        path_wall, path_cpu, path_peak, _ = run_eval(paths, path_model, Path(scratch), command)
        # The model steps the paths took, as the saved run counts them (not the server's
        # probe before the first case).
        results = (Path(scratch) / "run-paths" / "results-1.jsonl").read_text("utf-8")
        steps = sum(
            answer["steps"]
            for line in results.splitlines()
            for answer in json.loads(line)["answers"]
        )
    rate = large_cases / wall
    growth = large_late - small_late
    return [
        Figure(
            "cases",
            f"{large_cases:,} (1 trial each, --concurrency 8, --json --report --save-run)",
        ),
        Figure(
            "cases a second (the command's whole run, its start included)",
            f"{rate:.0f}",
            f">= {GOAL_RATE:.0f}",
            None if smoke else rate >= GOAL_RATE,
        ),
        Figure("the command's CPU a case", f"{cpu / large_cases * 1000:.2f} ms"),
        Figure(
            "peak RSS (the start's, mostly)",
            f"{small_peak:.0f} MiB at {small_cases:,} cases, {large_peak:.0f} at {large_cases:,}",
        ),
        Figure(
            f"peak RSS, {large_cases:,} cases against {small_cases:,}",
            f"{large_peak - small_peak:+.0f} MiB",
            f"<= {GOAL_GROWTH_MIB} MiB more",
            None if smoke else large_peak - small_peak <= GOAL_GROWTH_MIB,
        ),
        Figure(
            "memory at the end of the run",
            f"{small_late:.0f} MiB at {small_cases:,} cases, {large_late:.0f} at {large_cases:,}",
        ),
        Figure(
            f"memory at the end, {large_cases:,} cases against {small_cases:,}",
            f"{growth:+.0f} MiB",
            f"<= {GOAL_GROWTH_MIB} MiB more",
            None if smoke else growth <= GOAL_GROWTH_MIB,
        ),
        Figure("the saved run on disk", f"{saved_mib:.1f} MiB at {large_cases:,} cases"),
        Figure(
            "the store (SQLite) after both runs",
            f"{stored_mib:.1f} MiB at {small_cases + large_cases:,} cases",
        ),
        Figure(
            "trajectory cases (--trajectory, --concurrency 8, --json --save-run)",
            f"{path_cases:,}, {steps:,} model steps",
        ),
        Figure(
            "trajectory steps a second (the command's whole run, its start included)",
            f"{steps / path_wall:.0f} ({path_cases / path_wall:.0f} cases a second, "
            f"{path_cpu / steps * 1000:.2f} ms CPU a step, peak RSS {path_peak:.0f} MiB)",
        ),
        Figure(
            f"eval rescore of the saved run: peak RSS, {large_cases:,} cases",
            f"{rescore_peak:.0f} MiB ({large_cases / rescore_wall:.0f} cases a second)",
            f"<= the run's + {GOAL_GROWTH_MIB} MiB",
            None if smoke else rescore_peak <= large_peak + GOAL_GROWTH_MIB,
        ),
        Figure(
            f"eval diff of the saved run with itself: peak RSS, {large_cases:,} cases",
            f"{diff_peak:.0f} MiB ({diff_wall:.1f} s)",
            f"<= the run's + {GOAL_GROWTH_MIB} MiB",
            None if smoke else diff_peak <= large_peak + GOAL_GROWTH_MIB,
        ),
        Figure(
            f"eval diff of the stored run with itself, by id: peak RSS, {large_cases:,} cases",
            f"{id_peak:.0f} MiB ({id_wall:.1f} s)",
            f"<= the run's + {GOAL_GROWTH_MIB} MiB",
            None if smoke else id_peak <= large_peak + GOAL_GROWTH_MIB,
        ),
    ]
