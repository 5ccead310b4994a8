"""The overhead of a call of an MCP server's read-only tool (issue 34): a server in its own
process (`bench.mcp_server`: `echo`, which answers at once) over streamable HTTP on loopback;
this process is the app. Per call, through the app's path (the run's toolbox parses the model's
call, `ServerToolCalls` checks and calls it through the process's `McpServers`, and frames
its result) and through the SDK's `Client.call_tool` alone, in alternating rounds: the time to
the result (median, p99) and this process's CPU (utime + stime). The server's own time is
that of a tool doing nothing, so the whole round trip is the overhead. Then this process's
memory after the first half of the calls and after all of them: a run's memory must not grow
with its number of calls. The server's CPU per call and the load average are printed beside
them: on a busy 2-core machine a call's time is mostly both ends waiting for a core.

Two references run in the same rounds, to show where the SDK's client CPU goes: the same
`tools/call` request (the SDK's JSON and headers) POSTed through httpx2 alone, the HTTP client
the SDK's transport is built on, and written by hand on an asyncio stream (the floor: HTTP/1.1
on loopback with no client library)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import cast
from urllib.parse import urlsplit

import httpx2
from mcp import Client

from assistant.mcp.config import ServerConfig
from assistant.mcp.servers import McpServers
from assistant.run.core.run_context import RunContext
from assistant.run.tools.server_tools import ServerCaps
from assistant.run.tools.toolbox import toolbox
from bench.report import Figure, median, percentile

FULL = {"calls": 600, "rounds": 6, "warmup": 20}
SMOKE = {"calls": 20, "rounds": 2, "warmup": 2}
ARGUMENTS = '{"text":"hello","reasoning":"the bench"}'
# The SDK's own request for `echo` on a 2026-07-28 connection, as it sends it (headers and body).
REQUEST_HEADERS = {
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": "tools/call",
    "mcp-name": "echo",
}
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "mcp", "version": "0.1.0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
WAYS = {
    "ours": "our path",
    "bare": "the SDK alone",
    "httpx": "httpx2 alone",
    "raw": "by hand",
}
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

    host = urlsplit(url)
    assert host.hostname is not None and host.port is not None
    reader, writer = await asyncio.open_connection(host.hostname, host.port)
    ids = iter(range(10**6, 10**9))

    def request() -> bytes:
        params = {"name": "echo", "arguments": {"text": "hello"}, "_meta": META}
        message = {"jsonrpc": "2.0", "id": next(ids), "method": "tools/call", "params": params}
        return json.dumps(message, separators=(",", ":")).encode()

    async with Client(url) as client, httpx2.AsyncClient() as http:

        async def bare() -> None:
            result = await client.call_tool("echo", {"text": "hello"})
            assert not result.is_error

        async def httpx() -> None:
            answer = await http.post(url, content=request(), headers=REQUEST_HEADERS)
            assert answer.status_code == 200 and b"hello" in answer.content, answer.content

        async def raw() -> None:
            body = request()
            head = f"POST {host.path} HTTP/1.1\r\nhost: {host.netloc}\r\n" + "".join(
                f"{name}: {value}\r\n" for name, value in REQUEST_HEADERS.items()
            )
            writer.write(f"{head}content-length: {len(body)}\r\n\r\n".encode() + body)
            answer = await reader.readuntil(b"\r\n\r\n")
            length = int(answer.lower().split(b"content-length:")[1].split(b"\r\n")[0])
            assert answer.startswith(b"HTTP/1.1 200") and b"hello" in await reader.readexactly(
                length
            ), answer

        steps = {"ours": ours, "bare": bare, "httpx": httpx, "raw": raw}
        for _ in range(sizes["warmup"]):
            for step in steps.values():
                await step()
        per_round = max(sizes["calls"] // sizes["rounds"], 1)
        times: dict[str, list[float]] = {name: [] for name in steps}
        cpu = dict.fromkeys(steps, 0.0)
        server_cpu = 0.0
        rss_half = 0
        for number in range(sizes["rounds"]):
            for name, step in steps.items():
                started_cpu, started_server = time.process_time(), _cpu_of(server_pid)
                for _ in range(per_round):
                    started = time.perf_counter()
                    await step()
                    times[name].append(time.perf_counter() - started)
                cpu[name] += time.process_time() - started_cpu
                if name in ("ours", "bare"):
                    server_cpu += _cpu_of(server_pid) - started_server
            if number == sizes["rounds"] // 2 - 1:
                rss_half = _rss()
        rss_end = _rss()
    writer.close()
    await servers.close()
    calls = per_round * sizes["rounds"]
    per_call = {name: cpu[name] / calls * 1000 for name in cpu}
    ours_cpu, bare_cpu = per_call["ours"], per_call["bare"]
    medians = {name: median(times[name]) * 1000 for name in times}
    ours_time, bare_time = medians["ours"], medians["bare"]
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
            "the same request's CPU / median time: " + ", ".join(WAYS[name] for name in WAYS),
            ", ".join(f"{per_call[name]:.2f} ms / {medians[name]:.2f} ms" for name in WAYS),
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
