"""`assistant check` of ASSISTANT_MCP_FILE (issue 43, point 14): every server connected at
once, every problem of every server said together (one that cannot be reached, a command that
does not exist, a tool left out, servers past what one request may carry), exit 1 on any;
`serve` says it at start (point 6). Against the SDK's own servers, over stdio and HTTP."""

from __future__ import annotations

import json
import re
import socket
import sys
from pathlib import Path

from assistant.fakes import FakeOpenAI, ids
from assistant.fakes.openai import responses as replies
from tests.mcp_servers import STDIO_COMMAND, ShopServer
from tests.process import clean_env, run_assistant

MANY = str(Path(STDIO_COMMAND[1]).with_name("many.py"))


def many(count: int, schema_chars: int = 0, huge: int = 0) -> dict:
    return {"command": [sys.executable, MANY, str(count), str(schema_chars), str(huge)]}


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"


def env_with(tmp_path: Path, servers: dict, **more: str) -> dict[str, str]:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"servers": servers}))
    return clean_env(
        ASSISTANT_MCP_FILE=str(path), DATABASE_URL=f"sqlite:///{tmp_path}/a.db", **more
    )


def rows(stdout: str) -> dict[tuple[str, str], tuple[str, str]]:
    """(server, check) -> (verdict, what was found)."""
    cells = [re.split(r"\s{2,}", line, maxsplit=3) for line in stdout.splitlines()[1:]]
    return {(server, what): (verdict, said) for server, what, verdict, said in cells}


def test_every_problem_of_every_server_is_said_at_once(tmp_path):
    shop = ShopServer().start()
    servers = {
        "shop": {"url": shop.url},
        "files": {"command": STDIO_COMMAND},
        "nope": {"command": ["no-such-command-for-the-check", "--serve"]},
        "down": {"url": closed_port_url()},
        "wide": many(2, 2_000, huge=1),
        "lots": many(125),
    }
    try:
        result = run_assistant("check", "--mcp", env=env_with(tmp_path, servers), cwd=tmp_path)
    finally:
        shop.stop()
    assert result.returncode == 1, result.stderr
    found = rows(result.stdout)
    assert found[("shop", "connected")] == ("ok", "7 tools offered")
    assert found[("files", "connected")] == ("ok", "7 tools offered")
    assert found[("nope", "connected")] == (
        "FAIL",
        "no: its command 'no-such-command-for-the-check' was not found",
    )
    assert found[("down", "connected")] == ("FAIL", "no: ConnectError")
    assert found[("wide", "connected")] == ("ok", "2 tools offered, 1 left out")
    verdict, said = found[("wide", "tool huge_002")]
    assert verdict == "FAIL" and said.startswith("its input schema has ")
    assert found[("lots", "fits a request")] == (
        "FAIL",
        "its 125 tools and the 20 before them would pass the 128 tools a request may carry "
        "(ASSISTANT_MAX_TOOLS_PER_REQUEST)",
    )
    verdict, said = found[("(every server)", "one request")]
    assert verdict == "ok" and said.startswith("20 tools of the 128 a request may carry, ")
    summary = result.stderr.strip().splitlines()[-1]
    assert summary.startswith("MCP check: 4 failing: nope connected: no: its command")
    assert not (tmp_path / "a.db").exists()  # no store made, no model asked


def test_the_full_check_fails_on_the_mcp_file_even_when_the_model_is_well(tmp_path):
    with FakeOpenAI(default=replies.finish_request()) as model:
        model.server.kind, model.server.served = "vllm", ("m",)
        env = env_with(
            tmp_path,
            {"files": {"command": STDIO_COMMAND}, "nope": {"command": ["no-such-command-x"]}},
            OPENAI_API_KEY=ids.OPENAI_API_KEY, OPENAI_BASE_URL=model.base_url,
            OPENAI_MAX_RETRIES="0", ASSISTANT_MODEL="m",
        )  # fmt: skip
        result = run_assistant("check", env=env, cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert "model check of http://127.0.0.1:" in result.stderr
    assert "1 failing: nope connected: no: its command 'no-such-command-x' was not found" in (
        result.stderr
    )


def test_a_good_file_passes_and_mcp_alone_needs_no_key(tmp_path):
    env = env_with(tmp_path, {"files": {"command": STDIO_COMMAND}})
    result = run_assistant("check", "--mcp", env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "MCP check: all well: files (7 tools offered)" in result.stderr
    alone = run_assistant("check", "--mcp", env=clean_env(), cwd=tmp_path)
    assert alone.returncode == 2 and "--mcp: ASSISTANT_MCP_FILE names no server" in alone.stderr
