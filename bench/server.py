"""`assistant serve` in its own process against the fakes, so that what is measured of the app
(its memory, its CPU, its event loop) is its own and not shared with the fakes or the sender."""

from __future__ import annotations

import errno
import os
import signal
import socket
from pathlib import Path
from types import TracebackType
from typing import Self

from assistant.fakes import FakeOpenAI, FakeSlack, ids
from tests.process import AssistantProcess, clean_env

# A deadline, reached only when the app never starts: a start (the store's migrations, the
# MCP servers' first connection) took over 60 s on 2 cores at a load average of 12.
STARTUP_TIMEOUT = 180.0
# A free port is free when asked for, and may be taken before the app binds it (a busy
# machine, many processes): then the app is started again on another.
PORT_ATTEMPTS = 5


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def taken_meanwhile(stderr: str) -> bool:
    """Whether a server's start failed on its port, taken since `free_port`: the app's
    `cannot listen on HOST:PORT: Address already in use`, or a bare uvicorn's `[Errno 98] ...
    address already in use`."""
    return f"[Errno {errno.EADDRINUSE}]" in stderr or os.strerror(errno.EADDRINUSE) in stderr


def app_env(slack: FakeSlack, model: FakeOpenAI, database_url: str, **env: str) -> dict[str, str]:
    """The environment of an app process against these fakes."""
    defaults = {
        "SLACK_BOT_TOKEN": ids.BOT_TOKEN,
        "SLACK_SIGNING_SECRET": ids.SIGNING_SECRET,
        "SLACK_API_URL": slack.api_url,
        "OPENAI_API_KEY": "sk-bench-not-a-real-key",
        "OPENAI_BASE_URL": model.base_url,
        "OPENAI_MAX_RETRIES": "0",
        "DATABASE_URL": database_url,
        "ASSISTANT_STREAM": "off",  # unless a benchmark streams (bench/stream.py)
    }
    return clean_env(**{**defaults, **env})


class _AppProcess:
    """What the benchmarks do with an app process: its pid and CPU, stopping or killing it;
    stopped on exit."""

    process: AssistantProcess

    def _started(self, ready: str) -> None:
        try:
            self.process.stderr.wait_for(ready, timeout=STARTUP_TIMEOUT)
        except BaseException:
            self.process.__exit__(None, None, None)
            raise

    @property
    def pid(self) -> int:
        return self.process.process.pid

    def cpu_seconds(self) -> float:
        """User + system CPU time the app process has used so far."""
        return cpu_seconds(self.pid)

    def stop(self) -> None:
        self.process.stop()

    def kill(self) -> None:
        """SIGKILL: no shutdown, nothing waited for, its leases left to expire."""
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


class AppServer(_AppProcess):
    """The app on a loopback port, its trace and log in `workdir`; stopped on exit.
    `runs="off"`: the ingress role (`serve --runs off`), whose answers workers give."""

    def __init__(
        self, slack: FakeSlack, model: FakeOpenAI, workdir: Path, runs: str = "on", **env: str
    ) -> None:
        self.database_url = env.pop("DATABASE_URL", f"sqlite:///{workdir / 'app.db'}")
        for attempt in range(1, PORT_ATTEMPTS + 1):
            self.port = free_port()
            environment = app_env(slack, model, self.database_url, PORT=str(self.port), **env)
            self.process = AssistantProcess(
                "serve", "--host", "127.0.0.1", "--runs", runs, env=environment, cwd=workdir
            )
            try:
                self._started(r"Uvicorn running on")
                return
            except AssertionError:
                if attempt == PORT_ATTEMPTS or not taken_meanwhile(self.process.stderr.text):
                    raise

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def rss_bytes(self) -> int:
        """Resident memory of the app process now (VmRSS)."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        raise RuntimeError("no VmRSS in /proc status")


class Worker(_AppProcess):
    """`assistant worker` on `database_url` (PostgreSQL), listening once started; stopped on
    exit."""

    def __init__(
        self, slack: FakeSlack, model: FakeOpenAI, workdir: Path, database_url: str, **env: str
    ) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        self.process = AssistantProcess(
            "worker", env=app_env(slack, model, database_url, **env), cwd=workdir
        )
        self._started(r"listening for requests")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time process `pid` has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15 of stat)
    return ticks / os.sysconf("SC_CLK_TCK")


def own_cpu_seconds() -> float:
    """CPU time of this process (the fakes and the sender), to show who was the bottleneck."""
    times = os.times()
    return times.user + times.system
