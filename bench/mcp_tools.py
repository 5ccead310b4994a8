"""The overhead of a call of an MCP server's read-only tool (issue 34): a server in its own
process (`bench.mcp_server`: `echo`, which answers at once) over streamable HTTP on loopback;
this process is the app. Per call, through the app's path (the run's toolbox parses the model's
call, `ServerToolCalls` checks and calls it through the process's `McpServers`, and frames
its result) and through the SDK's `Client.call_tool` alone, in alternating rounds: the time to
the result (median, p99) and this process's CPU (utime + stime). The server's own time is
that of a tool doing nothing, so the whole round trip is the overhead. Then this process's
memory after the first half of the calls and after all of them: a run's memory must not grow
with its number of calls. The server's CPU per call and the load average are printed beside
them: on a busy 2-core machine a call's time is mostly both ends waiting for a core."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import cast

from mcp import Client

from assistant.mcp.config import ServerConfig
from assistant.mcp.servers import McpServers
from assistant.run.tools.run_context import RunContext
from assistant.run.tools.server_tools import ServerCaps
from assistant.run.tools.toolbox import toolbox
from bench.report import Figure, median, percentile

FULL = {"calls": 600, "rounds": 6, "warmup": 20}
SMOKE = {"calls": 20, "rounds": 2, "warmup": 2}
ARGUMENTS = '{"text":"hello","reasoning":"the bench"}'
CPU_GOAL_MS = 2.0
LATENCY_GOAL_MS = 5.0


def run(smoke: bool) -> list[Figure]:
    sizes = SMOKE if smoke else FULL
    server = subprocess.Popen(
        [sys.executable, "-m", "bench.mcp_server"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        return asyncio.run(_measure(f"http://127.0.0.1:{port}/mcp", sizes, server.pid))
    finally:
        server.terminate()
        server.wait(30)


async def _measure(url: str, sizes: dict[str, int], server_pid: int) -> list[Figure]:
    servers = McpServers([ServerConfig(name="bench", url=url)], deadline=30.0)
    box = await toolbox({}, servers, caps=ServerCaps(calls_per_run=10**9))
    assert "bench__echo" in box.server_tools, "the bench's server offers no echo tool"
    ctx = cast(RunContext, None)  # a server tool's call reads nothing of the run

    async def ours() -> None:
        call = box.parse("bench__echo", ARGUMENTS)
        result = await box.function(call)(call, ctx, 1)
        assert result is not None and result.endswith("\nhello"), result

    async with Client(url) as client:

        async def bare() -> None:
            result = await client.call_tool("echo", {"text": "hello"})
            assert not result.is_error

        for _ in range(sizes["warmup"]):
            await ours()
            await bare()
        per_round = max(sizes["calls"] // sizes["rounds"], 1)
        times: dict[str, list[float]] = {"ours": [], "bare": []}
        cpu = {"ours": 0.0, "bare": 0.0}
        server_cpu = 0.0
        rss_half = 0
        for number in range(sizes["rounds"]):
            for name, step in (("ours", ours), ("bare", bare)):
                started_cpu, started_server = time.process_time(), _cpu_of(server_pid)
                for _ in range(per_round):
                    started = time.perf_counter()
                    await step()
                    times[name].append(time.perf_counter() - started)
                cpu[name] += time.process_time() - started_cpu
                server_cpu += _cpu_of(server_pid) - started_server
            if number == sizes["rounds"] // 2 - 1:
                rss_half = _rss()
        rss_end = _rss()
    await servers.close()
    calls = per_round * sizes["rounds"]
    ours_cpu, bare_cpu = (cpu[name] / calls * 1000 for name in ("ours", "bare"))
    ours_time, bare_time = (median(times[name]) * 1000 for name in ("ours", "bare"))
    p99 = {name: percentile(times[name], 0.99) * 1000 for name in times}
    fastest = min(times["bare"]) * 1000
    return [
        Figure("calls (each way)", f"{calls} over {sizes['rounds']} alternating rounds"),
        Figure(
            "CPU per call: our path / the SDK's call_tool alone",
            f"{ours_cpu:.2f} ms / {bare_cpu:.2f} ms",
        ),
        Figure(
            "app CPU per call beyond the SDK's (our path's own)",
            f"{ours_cpu - bare_cpu:.2f} ms",
            f"<= {CPU_GOAL_MS:g} ms",
            ours_cpu - bare_cpu <= CPU_GOAL_MS,
        ),
        Figure(
            "app CPU per call, the SDK's client included",
            f"{ours_cpu:.2f} ms",
            f"<= {CPU_GOAL_MS:g} ms",
            ours_cpu <= CPU_GOAL_MS,
        ),
        Figure(
            "time to the result, median / p99: our path",
            f"{ours_time:.2f} ms / {p99['ours']:.2f} ms",
        ),
        Figure(
            "time to the result, median / p99: the SDK alone",
            f"{bare_time:.2f} ms / {p99['bare']:.2f} ms",
        ),
        Figure(
            "the fastest call, the SDK alone",
            f"{fastest:.2f} ms",
        ),
        Figure(
            "the server process's CPU per call (its SDK's; not the app's)",
            f"{server_cpu / (2 * calls) * 1000:.2f} ms",
        ),
        Figure("load average (1 min) at the end", f"{os.getloadavg()[0]:.1f}"),
        Figure(
            "latency our path adds to the SDK's (medians)",
            f"{ours_time - bare_time:.2f} ms",
            f"<= {LATENCY_GOAL_MS:g} ms",
            ours_time - bare_time <= LATENCY_GOAL_MS,
        ),
        Figure(
            "memory after half the calls / after all",
            f"{rss_half / 1024:.1f} MiB / {rss_end / 1024:.1f} MiB",
            "no growth (within 2 MiB)",
            rss_end - rss_half <= 2048,
        ),
    ]


def _cpu_of(pid: int) -> float:
    """Another process's CPU so far (user + system), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _rss() -> int:
    """This process's resident memory, in KiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0
