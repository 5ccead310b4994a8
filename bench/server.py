"""`assistant serve` in its own process against the fakes, so that what is measured of the app
(its memory, its CPU, its event loop) is its own and not shared with the fakes or the sender."""

from __future__ import annotations

import os
import signal
import socket
from pathlib import Path
from types import TracebackType
from typing import Self

from assistant.fakes import FakeOpenAI, FakeSlack, ids
from tests.process import AssistantProcess, clean_env

STARTUP_TIMEOUT = 60.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def app_env(slack: FakeSlack, model: FakeOpenAI, database_url: str, **env: str) -> dict[str, str]:
    """The environment of an app process against these fakes."""
    return clean_env(
        SLACK_BOT_TOKEN=ids.BOT_TOKEN,
        SLACK_SIGNING_SECRET=ids.SIGNING_SECRET,
        SLACK_API_URL=slack.api_url,
        OPENAI_API_KEY="sk-bench-not-a-real-key",
        OPENAI_BASE_URL=model.base_url,
        OPENAI_MAX_RETRIES="0",
        DATABASE_URL=database_url,
        ASSISTANT_STREAM="off",  # unless a benchmark streams (bench/stream.py)
        **env,
    )


class AppServer:
    """The app on a loopback port, its trace and log in `workdir`; stopped on exit.
    `runs="off"`: the ingress role (`serve --runs off`), whose answers workers give."""

    def __init__(
        self, slack: FakeSlack, model: FakeOpenAI, workdir: Path, runs: str = "on", **env: str
    ) -> None:
        self.port = free_port()
        self.database_url = env.pop("DATABASE_URL", f"sqlite:///{workdir / 'app.db'}")
        settings = {
            "SLACK_BOT_TOKEN": ids.BOT_TOKEN,
            "SLACK_SIGNING_SECRET": ids.SIGNING_SECRET,
            "SLACK_API_URL": slack.api_url,
            "OPENAI_API_KEY": "sk-bench-not-a-real-key",
            "OPENAI_BASE_URL": model.base_url,
            "OPENAI_MAX_RETRIES": "0",
            "DATABASE_URL": self.database_url,
            "PORT": str(self.port),
            "ASSISTANT_STREAM": "off",  # unless a benchmark streams (bench/stream.py)
            **env,
        }
        self.process = AssistantProcess(
            "serve", "--host", "127.0.0.1", "--runs", runs, env=clean_env(**settings), cwd=workdir
        )
        try:
            self.process.stderr.wait_for(r"Uvicorn running on", timeout=STARTUP_TIMEOUT)
        except BaseException:
            self.process.__exit__(None, None, None)
            raise

    @property
    def pid(self) -> int:
        return self.process.process.pid

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def rss_bytes(self) -> int:
        """Resident memory of the app process now (VmRSS)."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        raise RuntimeError("no VmRSS in /proc status")

    def cpu_seconds(self) -> float:
        """User + system CPU time the app process has used so far."""
        return cpu_seconds(self.pid)

    def stop(self) -> None:
        self.process.stop()

    def kill(self) -> None:
        """SIGKILL: no shutdown, nothing waited for."""
        self.process.stop(signal.SIGKILL)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self.process.process.poll() is None:
            self.process.stop()


class Worker:
    """`assistant worker` on `database_url` (PostgreSQL), listening once started; stopped on
    exit."""

    def __init__(
        self, slack: FakeSlack, model: FakeOpenAI, workdir: Path, database_url: str, **env: str
    ) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        self.process = AssistantProcess(
            "worker", env=app_env(slack, model, database_url, **env), cwd=workdir
        )
        try:
            self.process.stderr.wait_for(r"listening for requests", timeout=STARTUP_TIMEOUT)
        except BaseException:
            self.process.__exit__(None, None, None)
            raise

    @property
    def pid(self) -> int:
        return self.process.process.pid

    def cpu_seconds(self) -> float:
        return cpu_seconds(self.pid)

    def kill(self) -> None:
        """SIGKILL: no shutdown, its leases left to expire."""
        self.process.stop(signal.SIGKILL)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self.process.process.poll() is None:
            self.process.stop()


def cpu_seconds(pid: int) -> float:
    """User + system CPU time process `pid` has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15 of stat)
    return ticks / os.sysconf("SC_CLK_TCK")


def own_cpu_seconds() -> float:
    """CPU time of this process (the fakes and the sender), to show who was the bottleneck."""
    times = os.times()
    return times.user + times.system
