"""tests/tier_check.py: a test outside the third tier that starts a process fails, naming the
command; the same test marked `processes` passes, and so does one whose process the app's MCP
stdio transport starts. Each case is a small suite run by pytest in a subprocess."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli import ROOT, show_output

STARTS = (
    "import multiprocessing, subprocess, sys\n"
    "import pytest\n\n"
    "{mark}def test_starts_one():\n"
    "    assert subprocess.run([sys.executable, '-c', 'pass']).returncode == 0\n\n"
    "{mark}def test_forks():\n"
    "    child = multiprocessing.get_context('fork').Process(target=print)\n"
    "    child.start()\n"
    "    child.join()\n"
)


def run_suite(tmp_path: Path, test: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_it.py").write_text(test, encoding="utf-8")
    plugins = ["-p", "tests.tier_check", "-p", "no:cacheprovider", "-p", "no:randomly"]
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", *plugins, "test_it.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        timeout=300,
    )
    show_output(result.stdout, result.stderr)
    return result


def test_a_test_outside_the_tier_that_starts_a_process_fails_naming_it(tmp_path):
    result = run_suite(tmp_path, STARTS.format(mark=""))
    assert result.returncode == 1, result.stdout
    assert "ERROR at teardown of test_starts_one" in result.stdout
    assert f"the test started a process ({sys.executable} -c pass)" in result.stdout
    assert "ERROR at teardown of test_forks" in result.stdout
    assert "the test started a process (a fork (multiprocessing or os.fork))" in result.stdout


@pytest.mark.parametrize("tier", ["processes", "bench", "real_model"])
def test_the_same_tests_in_a_tier_of_processes_pass(tmp_path, tier):
    """The third tier, the benchmarks' smoke runs and the real model's start processes by
    design, each in a CI step of its own."""
    result = run_suite(tmp_path, STARTS.format(mark=f"@pytest.mark.{tier}\n"))
    assert result.returncode == 0, result.stdout


def test_an_mcp_server_the_apps_stdio_transport_starts_is_the_app_s(tmp_path):
    test = (
        "import asyncio\n"
        "from assistant.mcp.config import ServerConfig\n"
        "from assistant.mcp.servers import McpServers\n"
        "from tests.mcp_servers import STDIO_COMMAND\n\n"
        "def test_lists_the_tools_of_a_stdio_server():\n"
        "    config = ServerConfig(name='shop', command=tuple(STDIO_COMMAND))\n"
        "    servers = McpServers([config], 60)\n\n"
        "    async def tools():\n"
        "        try:\n"
        "            return [t.name for t in await servers.tools()]\n"
        "        finally:\n"
        "            await servers.close()\n\n"
        "    assert 'lookup_order' in asyncio.run(tools())\n"
    )
    result = run_suite(tmp_path, test)
    assert result.returncode == 0, result.stdout
