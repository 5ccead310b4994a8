"""What a person's token adds to a call of an `auth: user` MCP server (issue 45): before each
call the app looks up the person's row (workspace, person, server), opens it (Fernet:
HMAC-SHA256 checked, AES-CBC decrypted, JSON read) and sets the bearer header; a token within
a minute of its expiry is refreshed first (a token request, the new tokens sealed and
written). Measured here in this process on a SQLite store, the refresh's token endpoint an
in-process `httpx2.MockTransport` (so the figure is the app's CPU, not a network's): the CPU
per call of the lookup and decrypt (the goal: at most 0.5 ms over today's MCP call, whose own
path is `bench.mcp_tools`'), and the CPU of one refresh (once per token lifetime)."""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from pathlib import Path

import httpx2
from cryptography.fernet import Fernet
from mcp.shared.auth import OAuthMetadata, OAuthToken

from assistant.mcp.config import parse_servers
from assistant.mcp.signin.flow import Discovery
from assistant.mcp.signin.sealing import Sealer
from assistant.mcp.signin.tokens import SignIns
from bench.report import Figure, median
from context.storage import open_store

FULL = {"calls": 3000, "refreshes": 200}
SMOKE = {"calls": 50, "refreshes": 5}
GOAL_MS = 0.5
SERVER = "https://tools.example.com/mcp"


def run(smoke: bool) -> list[Figure]:
    sizes = SMOKE if smoke else FULL
    with tempfile.TemporaryDirectory() as directory:
        return asyncio.run(_measure(Path(directory), sizes))


def _token_endpoint(request: httpx2.Request) -> httpx2.Response:
    token = OAuthToken(access_token="a" * 40, refresh_token="r" * 40, expires_in=3600)
    return httpx2.Response(200, json=token.model_dump(exclude_none=True))


async def _measure(directory: Path, sizes: dict[str, int]) -> list[Figure]:
    store = open_store(f"sqlite:///{directory / 'store.db'}")
    configs = parse_servers(
        {"servers": {"tools": {"url": SERVER, "auth": "user", "client_id": "bench"}}}
    )
    transport = httpx2.MockTransport(_token_endpoint)
    sign_ins = SignIns(
        store,
        Sealer(Fernet.generate_key().decode()),
        "https://aya.example.com",
        configs,
        http=lambda: httpx2.AsyncClient(transport=transport),
    )
    metadata = OAuthMetadata.model_validate(
        {
            "issuer": "https://auth.example.com",
            "authorization_endpoint": "https://auth.example.com/authorize",
            "token_endpoint": "https://auth.example.com/token",
        }
    )
    sign_ins._discovered["tools"] = Discovery(SERVER, SERVER, metadata, "tools")
    token = OAuthToken(access_token="a" * 40, refresh_token="r" * 40, expires_in=3600)
    await sign_ins._keep("T1", "U1", "tools", token, "2026-11-29T08:00:00Z")
    try:
        for _ in range(20):  # warm-up: the statement cache, the key schedule
            await sign_ins.bearer("tools", "T1", "U1")
        times: list[float] = []
        started = time.process_time()
        for _ in range(sizes["calls"]):
            one = time.perf_counter()
            assert await sign_ins.bearer("tools", "T1", "U1") == "a" * 40
            times.append(time.perf_counter() - one)
        per_call = (time.process_time() - started) / sizes["calls"] * 1000
        refresh_cpu = 0.0
        for _ in range(sizes["refreshes"]):
            row = store.mcp_connection("T1", "U1", "tools")
            assert row is not None
            opened = sign_ins.sealer.open(row.sealed)
            opened["expires_at"] = time.time()  # due: the next call refreshes it first
            store.save_connection(
                type(row)(**{**row.__dict__, "sealed": sign_ins.sealer.seal(opened)})
            )
            started = time.process_time()
            assert await sign_ins.bearer("tools", "T1", "U1") == "a" * 40
            refresh_cpu += time.process_time() - started
        sealed = store.mcp_connection("T1", "U1", "tools")
        assert sealed is not None and "a" * 40 not in json.dumps(sealed.__dict__)
    finally:
        store.close()
    return [
        Figure("calls / refreshes", f"{sizes['calls']} / {sizes['refreshes']}"),
        Figure(
            "added CPU per call: the person's row looked up and opened",
            f"{per_call:.3f} ms",
            f"<= {GOAL_MS:g} ms",
            per_call <= GOAL_MS,
        ),
        Figure("time per lookup and open, median", f"{median(times) * 1000:.3f} ms"),
        Figure(
            "CPU of one refresh (token request, tokens sealed and written; once a lifetime)",
            f"{refresh_cpu / sizes['refreshes'] * 1000:.2f} ms",
        ),
    ]
