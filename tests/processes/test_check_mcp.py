"""`serve` says at start what its runs will leave out of ASSISTANT_MCP_FILE (issue 43, point 6):
a real `assistant serve` process (tests/commands/test_check_mcp.py checks `assistant check`
in process)."""

from __future__ import annotations

from assistant.fakes import FakeOpenAI, FakeSlack, ids
from tests.commands.test_check_mcp import env_with, many
from tests.commands.test_settings import free_port
from tests.process import AssistantProcess


def test_serve_says_at_start_what_runs_will_leave_out(tmp_path):
    """More tools in the file than a request may carry: said at start, not at the first run
    (issue 43, point 6)."""
    with FakeSlack() as slack, FakeOpenAI() as model:
        env = env_with(
            tmp_path, {"first": many(100), "second": many(101)},
            OPENAI_API_KEY=ids.OPENAI_API_KEY, OPENAI_BASE_URL=model.base_url,
            PORT=str(free_port()), SLACK_BOT_TOKEN=ids.BOT_TOKEN,
            SLACK_SIGNING_SECRET=ids.SIGNING_SECRET, SLACK_API_URL=slack.api_url,
        )  # fmt: skip
        with AssistantProcess("serve", "--host", "127.0.0.1", env=env, cwd=tmp_path) as app:
            said = app.stderr.wait_for(r"MCP check: .*")
    assert said.group(0) == (
        "MCP check: 1 failing: second fits a request: its 101 tools and the 104 before them "
        "would pass the 128 tools a request may carry (ASSISTANT_MAX_TOOLS_PER_REQUEST) "
        "(`assistant check` says more)"
    )
    assert "Traceback" not in app.stderr.text
