"""`serve` prints `assistant check`'s summary at start and applies what it found (issue 35): a
real `assistant serve` process against the fake model (tests/commands/test_check.py checks the
command in process)."""

from __future__ import annotations

from assistant.fakes import ids
from tests.commands.test_check import env_for, fake
from tests.commands.test_settings import free_port
from tests.process import AssistantProcess


def test_serve_prints_the_summary_at_start_and_asks_as_json_from_then_on(tmp_path, slack):
    with fake(kind="llama.cpp", tool_choice="ignored") as model:
        env = env_for(model, tmp_path, ASSISTANT_MODEL_CHECK="on", PORT=str(free_port()),
                      SLACK_BOT_TOKEN=ids.BOT_TOKEN, SLACK_SIGNING_SECRET=ids.SIGNING_SECRET,
                      SLACK_API_URL=slack.api_url)  # fmt: skip
        with AssistantProcess("serve", "--host", "127.0.0.1", env=env, cwd=tmp_path) as app:
            said = app.stderr.wait_for(r"model check of http://127\.0\.0\.1:\d+: .*")
    assert "to look at" in said.group(0) and "asked as JSON from now on" in said.group(0)
    assert "Traceback" not in app.stderr.text
