"""App CPU per answered mention, posted whole and streamed, and per event only acknowledged.

`python -m bench cpu`. `assistant serve` in its own process (its CPU is its own: utime + stime
from /proc) answers mentions in new threads one at a time (sent, then waited for until its
run has removed its reaction), against a zero-latency model answering in one call
(`postMessage` and `finishRequest` in one reply) with a text of 100 and of 2,000 tokens,
with ASSISTANT_STREAM off (the reply posted whole) and auto (streamed: the model's tokens as
fast as the connection goes, Slack's chat.startStream/appendStream/stopStream). Then channel
messages the app only acknowledges (not in a thread it is in: one store read each), one at a
time.
One at a time, so that the figure is the work of one answer and not of a backlog.

`BENCH_CPU_PROFILE=DIR` (with py-spy installed: `pip install py-spy`) also samples the app
process with py-spy over each measured series and writes DIR/<series>.txt: the functions
with the most samples, themselves (self) and with what they call (total).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections import Counter
from pathlib import Path
from typing import TypedDict

from assistant.fakes import FakeOpenAI, FakeSlack
from assistant.fakes.events import builders as slack_events
from assistant.fakes.openai import responses as replies
from assistant.fakes.requests import event_callback, signed_event_request
from bench.report import Figure, ms
from bench.server import AppServer
from bench.stream import answer_text, post_event
from tests.harness import mention


class Size(TypedDict):
    warmup: int
    answers: int
    acks: int
    sizes: tuple[int, ...]


FULL: Size = {"warmup": 20, "answers": 200, "acks": 500, "sizes": (100, 2000)}
SMOKE: Size = {"warmup": 1, "answers": 3, "acks": 5, "sizes": (30,)}
WHOLE_GOAL_S = 0.005
STREAM_RATIO_GOAL = 1.5


def run(smoke: bool = False) -> list[Figure]:
    size = SMOKE if smoke else FULL
    profile_dir = os.environ.get("BENCH_CPU_PROFILE")
    per_answer: dict[tuple[str, int], float] = {}
    per_ack = 0.0
    load_before = os.getloadavg()[0]
    with FakeSlack() as slack, FakeOpenAI() as model, tempfile.TemporaryDirectory() as work:
        for mode in ("off", "auto"):
            workdir = Path(work) / mode
            workdir.mkdir()
            with AppServer(slack, model, workdir, ASSISTANT_STREAM=mode) as app:
                for n in size["sizes"]:
                    text = answer_text(n)
                    model.default = lambda _body, text=text: replies.tool_calls(
                        ("postMessage", {"text": text, "reasoning": "answering"}),
                        ("finishRequest", {"reasoning": "done"}),
                    )
                    _answer(app, slack, size["warmup"])
                    with _Profile(app.pid, profile_dir, f"answer-{n}-stream-{mode}"):
                        cpu = app.cpu_seconds()
                        _answer(app, slack, size["answers"])
                        per_answer[mode, n] = (app.cpu_seconds() - cpu) / size["answers"]
                if mode == "off":
                    _acknowledge(app, slack, size["warmup"])
                    with _Profile(app.pid, profile_dir, "ack"):
                        cpu = app.cpu_seconds()
                        _acknowledge(app, slack, size["acks"])
                        per_ack = (app.cpu_seconds() - cpu) / size["acks"]
                app.stop()
    figures = [
        Figure(
            "model",
            "zero latency, one call an answer (postMessage + finishRequest); mentions in new "
            "threads, one at a time",
        )
    ]
    for n in size["sizes"]:
        whole, streamed = per_answer["off", n], per_answer["auto", n]
        figures += [
            Figure(
                f"app CPU per answered mention, {n} tokens posted whole",
                ms(whole),
                f"≤ {ms(WHOLE_GOAL_S)}",
                whole <= WHOLE_GOAL_S,
            ),
            Figure(
                f"app CPU per answered mention, {n} tokens streamed (x whole)",
                f"{ms(streamed)} ({streamed / whole:.2f}x)",
                f"≤ {STREAM_RATIO_GOAL}x whole",
                streamed <= STREAM_RATIO_GOAL * whole,
            ),
        ]
    figures.append(Figure("app CPU per channel message only acknowledged", ms(per_ack)))
    # CPU time grows on a busy machine (caches, switches): the figures compare within a run.
    load = f"{load_before:.1f} → {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    figures.append(Figure("load average (1 min), start → end", load))
    return figures


def _answer(app: AppServer, slack: FakeSlack, count: int) -> None:
    """`count` mentions in new threads, each sent once the one before has been answered."""
    for _ in range(count):
        removed = len(slack.calls_to("reactions.remove"))
        body, headers = signed_event_request(event_callback(mention(slack, "lunch?")))
        post_event(app.url, body, headers)
        slack.wait_for_call("reactions.remove", count=removed + 1, timeout=60)


def _acknowledge(app: AppServer, slack: FakeSlack, count: int) -> None:
    """`count` channel messages not addressed to the bot and in no thread it is in, one at a
    time: the app looks each one's thread up, and records and answers nothing."""
    before = Counter(c.method for c in slack.calls)
    for n in range(count):
        body, headers = signed_event_request(event_callback(slack_events.message(f"aside {n}")))
        post_event(app.url, body, headers)
    made = Counter(c.method for c in slack.calls) - before
    if made.get("chat.postMessage"):
        raise AssertionError(f"a message only acknowledged was answered: {made}")


class _Profile:
    """py-spy sampling process `pid` while the block runs, when asked (a directory) and
    installed; a summary of its samples in DIR/NAME.txt."""

    def __init__(self, pid: int, directory: str | None, name: str) -> None:
        self.pid, self.name = pid, name
        self.directory = Path(directory) if directory and shutil.which("py-spy") else None
        self.process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> None:
        if self.directory is None:
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        self.raw = self.directory / f"{self.name}.raw"
        command = ["py-spy", "record", "--pid", str(self.pid), "--rate", "500", "--gil", "--format"]
        self.process = subprocess.Popen(
            [*command, "raw", "--output", str(self.raw), "--nonblocking"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def __exit__(self, *exc: object) -> None:
        if self.process is None or self.directory is None:
            return
        self.process.send_signal(2)  # SIGINT: py-spy writes what it sampled and exits
        self.process.wait(timeout=60)
        (self.directory / f"{self.name}.txt").write_text(summary(self.raw.read_text()))


def summary(collapsed: str, top: int = 40) -> str:
    """The functions with the most samples in py-spy's collapsed stacks (`a;b;c COUNT` a
    line): self (the innermost frame) and total (anywhere in the stack, once a stack)."""
    own: Counter[str] = Counter()
    total: Counter[str] = Counter()
    samples = 0
    for line in collapsed.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack:
            continue
        frames = [f for f in stack.split(";") if f]
        samples += int(count)
        own[frames[-1]] += int(count)
        for frame in set(frames):
            total[frame] += int(count)
    lines = [f"{samples} samples", "", "self %  function"]
    lines += [f"{c / samples:6.1%}  {f}" for f, c in own.most_common(top)]
    lines += ["", "total %  function"]
    lines += [f"{c / samples:6.1%}  {f}" for f, c in total.most_common(top)]
    return "\n".join(lines) + "\n"
