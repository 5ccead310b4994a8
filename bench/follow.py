"""`assistant show THREAD --follow`: how long after an entry is committed by another process the
follower prints it, on SQLite and on PostgreSQL.

The follower is the real command in a subprocess; this process appends as the app would and
notes when each append returned, and a reader thread notes when the follower's output line
with the entry's text arrived. Appends come after a random pause (up to twice the follower's
poll interval), so they fall anywhere in its polling cycle, as live entries do.
"""

from __future__ import annotations

import random
import subprocess
import sys
import threading
import time
from pathlib import Path
from tempfile import TemporaryDirectory

from sqlalchemy.exc import OperationalError

from assistant.commands.watch import POLL_SECONDS
from bench.report import Figure, median, ms, percentile
from bench.store import scratch_postgres
from context.entry import UserContent
from context.storage import ThreadKey, open_store
from tests.cli import ROOT
from tests.process import clean_env

KEY = ThreadKey("T0BENCH", "C0FOLLOW", "1700000000.000100")
FULL, SMOKE = 60, 3
TIMEOUT = 30.0


class Follower:
    """`assistant show KEY --follow`; `seen(text)` waits for a line holding `text` and says
    when it arrived."""

    def __init__(self, url: str) -> None:
        self._process = subprocess.Popen(
            [sys.executable, "-m", "assistant.cli", "show", str(KEY), "--follow"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=clean_env(DATABASE_URL=url),
            cwd=ROOT,
        )
        self._arrived: dict[str, float] = {}
        self._cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            now = time.perf_counter()
            with self._cond:
                self._arrived[line.decode("utf-8", "replace").strip()] = now
                self._cond.notify_all()

    def seen(self, text: str) -> float:
        with self._cond:
            if not self._cond.wait_for(lambda: text in self._arrived, TIMEOUT):
                raise TimeoutError(f"the follower never printed {text!r}")
            return self._arrived[text]

    def stop(self) -> None:
        self._process.terminate()
        try:
            self._process.wait(TIMEOUT)
        except subprocess.TimeoutExpired:
            self._process.kill()  # never left running
            self._process.wait()
            raise


def measure(url: str, label: str, count: int) -> list[Figure]:
    store = open_store(url)
    follower = None
    try:
        store.append(KEY, "persona", "2025-01-01T00:00:00Z")
        follower = Follower(url)
        follower.seen("🧠 System: persona")
        delays = []
        for n in range(count):
            time.sleep(random.uniform(0, 2 * POLL_SECONDS))  # anywhere in the polling cycle
            text = f"entry {n + 1} of the benchmark"
            store.append(KEY, UserContent(userid="<@U0BENCH>", text=text), "2025-01-01T00:00:01Z")
            committed = time.perf_counter()
            delays.append(follower.seen(f"> {text}") - committed)
    finally:
        if follower is not None:
            follower.stop()
        store.close()
    return [
        Figure(
            f"{label}: commit → printed by `show --follow`, p50 / p99 / max ({count} entries, "
            f"poll every {POLL_SECONDS:g} s)",
            f"{ms(median(delays))} / {ms(percentile(delays, 0.99))} / {ms(max(delays))}",
        )
    ]


def run(smoke: bool = False) -> list[Figure]:
    count = SMOKE if smoke else FULL
    with TemporaryDirectory() as tmp:
        figures = measure(f"sqlite:///{Path(tmp) / 'follow.db'}", "SQLite", count)
    try:
        with scratch_postgres() as url:
            figures += measure(url, "PostgreSQL", count)
    except OperationalError as exc:
        reason = str(exc.orig).strip().splitlines()[0]
        figures.append(Figure("PostgreSQL", f"not measured: unreachable ({reason})", "runs", False))
    return figures
