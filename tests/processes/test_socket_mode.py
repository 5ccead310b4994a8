"""`assistant run` (Socket Mode) and `assistant serve` (HTTP) as real processes, as a user
starts them, against the fakes on loopback."""

from __future__ import annotations

import http.client
import json
import re
import signal
import socket

from assistant.fakes import ids
from assistant.fakes.openai import responses as replies
from context.render import render_log
from context.storage import open_store
from tests.harness import mention as say
from tests.harness import thread_of
from tests.process import TIMEOUT, AssistantProcess, clean_env


def socket_env(slack, model, tmp_path, **extra: str) -> dict[str, str]:
    settings = {
        "SLACK_BOT_TOKEN": ids.BOT_TOKEN,
        "SLACK_APP_TOKEN": ids.APP_TOKEN,
        "SLACK_API_URL": slack.api_url,
        "OPENAI_API_KEY": ids.OPENAI_API_KEY,
        "OPENAI_BASE_URL": model.base_url,
        "OPENAI_MAX_RETRIES": "0",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'app.db'}",
        "ASSISTANT_STREAM": "off",  # answers posted whole (streamed: tests/app/test_streaming.py)
    }
    return clean_env(**{**settings, **extra})


def test_run_answers_a_mention_over_socket_mode_and_traces_it(slack, model, tmp_path):
    model.script(
        replies.tool_calls(("postMessage", {"text": "Risotto!", "reasoning": "Lunch idea"})),
        replies.tool_calls(("finishRequest", {"reasoning": "Answered"})),
    )
    database = tmp_path / "app.db"
    with AssistantProcess("run", env=socket_env(slack, model, tmp_path), cwd=tmp_path) as app:
        slack.wait_connected(timeout=TIMEOUT)
        assert slack.calls_to("apps.connections.open")[0].token == ids.APP_TOKEN

        mention = say(slack, "lunch idea please?")
        envelope_id = slack.send_event(mention)
        assert slack.wait_for_ack(envelope_id, timeout=TIMEOUT) == {"envelope_id": envelope_id}

        posts = slack.wait_for_call("chat.postMessage", timeout=TIMEOUT)
        assert posts[0].params["channel"] == mention["channel"]
        assert posts[0].params["thread_ts"] == mention["ts"]
        assert posts[0].token == ids.BOT_TOKEN
        slack.wait_for_call("reactions.remove", timeout=TIMEOUT)  # the run's last Slack call

        code = app.stop(signal.SIGTERM)

    assert code == 0, app.stderr.text
    assert "Traceback" not in app.stderr.text
    assert "will be unused" not in app.stderr.text  # Bolt's warning: SLACK_BOT_TOKEN is set
    assert ids.BOT_TOKEN not in app.stderr.text + app.stdout.text
    assert ids.APP_TOKEN not in app.stderr.text + app.stdout.text

    store = open_store(f"sqlite:///{database}")
    try:
        entries = store.entries(thread_of(mention))
    finally:
        store.close()
    assert [(e.role, e.turn) for e in entries] == [
        ("system", 0),
        ("user", 0),
        ("assistant", 1),
        ("assistant", 1),
    ]
    trace = render_log(entries)
    assert app.stdout.text == trace
    assert f"👤 User <@{ids.USER_ID}> [Turn 0]" in trace
    assert "> lunch idea please?" in trace
    assert '💬 postMessage:\n   "Risotto!"\n   └─ Reason: Lunch idea' in trace
    assert "✅ finishRequest\n   └─ Reason: Answered" in trace
    assert len(slack.calls_to("chat.postMessage")) == 1


def test_run_stops_cleanly_on_sigint(slack, model, tmp_path):
    with AssistantProcess("run", env=socket_env(slack, model, tmp_path), cwd=tmp_path) as app:
        slack.wait_connected(timeout=TIMEOUT)
        code = app.stop(signal.SIGINT)
    assert code == 0, app.stderr.text  # Ctrl-C is a stop asked for, as SIGTERM is
    assert "Traceback" not in app.stderr.text


def test_run_stops_cleanly_on_sigterm(slack, model, tmp_path):
    """Process managers (Procfile platforms, systemd, Docker) stop a worker with SIGTERM."""
    with AssistantProcess("run", env=socket_env(slack, model, tmp_path), cwd=tmp_path) as app:
        slack.wait_connected(timeout=TIMEOUT)
        code = app.stop(signal.SIGTERM)
    assert code == 0, app.stderr.text
    assert "Traceback" not in app.stderr.text


def test_sigterm_lets_the_run_under_way_finish(slack, model, tmp_path):
    held = replies.hold(replies.tool_calls(("postMessage", {"text": "Late", "reasoning": "r"})))
    model.script(held, replies.tool_calls(("finishRequest", {"reasoning": "done"})))
    with AssistantProcess("run", env=socket_env(slack, model, tmp_path), cwd=tmp_path) as app:
        slack.wait_connected(timeout=TIMEOUT)
        mention = say(slack, "take your time")
        slack.wait_for_ack(slack.send_event(mention), timeout=TIMEOUT)
        held.wait_reached(timeout=TIMEOUT)

        app.process.send_signal(signal.SIGTERM)
        # The signal was taken: the worker leaves Slack (no new events) but not its run,
        # which has a short grace to end (tests/processes/test_stopping.py: one that does not).
        slack._wait(lambda: not slack._sockets, TIMEOUT, lambda: "the socket stayed open")
        assert app.process.poll() is None
        held.release()
        code = app.stop(None)

    assert code == 0, app.stderr.text
    posts = slack.calls_to("chat.postMessage")
    assert [p.params["thread_ts"] for p in posts] == [mention["ts"]]
    assert "✅ finishRequest" in app.stdout.text


def test_sigterm_while_still_connecting_stops_at_once(slack, model, tmp_path):
    # Slack keeps failing to hand out a websocket URL: slack-sdk retries without end.
    slack.fail("apps.connections.open", "internal_error", times=1000)
    with AssistantProcess("run", env=socket_env(slack, model, tmp_path), cwd=tmp_path) as app:
        slack.wait_for_call("apps.connections.open", count=2, timeout=TIMEOUT)  # check + connect
        code = app.stop(signal.SIGTERM)
    assert code == 0, app.stderr.text


def test_a_refused_token_is_one_clear_message_not_endless_retries(slack, model, tmp_path):
    # An app-level token of the right shape that Slack no longer takes (revoked, or from
    # another app).
    slack.app_token = "xapp-1-the-one-slack-issued"
    env = socket_env(slack, model, tmp_path, SLACK_APP_TOKEN="xapp-1-revoked-long-ago")
    with AssistantProcess("run", env=env, cwd=tmp_path) as app:
        code = app.stop(None)
    assert code == 2, app.stderr.text
    assert "assistant run: Slack refused a token:\n" in app.stderr.text
    assert "  SLACK_APP_TOKEN: refused by Slack (invalid_auth)\n" in app.stderr.text
    assert "SLACK_BOT_TOKEN" not in app.stderr.text
    assert "Traceback" not in app.stderr.text
    assert "revoked-long-ago" not in app.stderr.text
    assert slack.socket_connections == 0
    assert not (tmp_path / "app.db").exists()  # a start Slack refused leaves no store behind


def test_run_with_slack_unreachable_says_so_once_per_attempt(slack, model, tmp_path):
    port = free_port()
    nowhere = f"http://127.0.0.1:{port}/api/"  # nothing listens there
    shown = f"http://127.0.0.1:{port}"  # a URL in output: scheme, host and port
    env = socket_env(slack, model, tmp_path, SLACK_API_URL=nowhere)
    with AssistantProcess("run", env=env, cwd=tmp_path) as app:
        app.stderr.wait_for(r"retrying in \d+ s\n")
        code = app.stop(signal.SIGTERM)
    assert code == 0, app.stderr.text
    lines = app.stderr.text.splitlines()
    assert lines[0] == "assistant run: connecting to Slack…"
    assert lines[1].startswith(
        f"assistant run: cannot reach Slack at {shown} to check SLACK_BOT_TOKEN ("
    )
    assert lines[1].endswith("); going on without the check")
    attempt = re.fullmatch(
        rf"assistant run: cannot reach Slack at {re.escape(shown)} \((.+)\), retrying in 10 s",
        lines[2],
    )
    assert attempt, lines
    assert "Connect call failed" in attempt.group(1) or "refused" in attempt.group(1)
    # Nothing else: no traceback, none of slack-sdk's own lines for the same failure.
    assert len(lines) == 3, lines
    assert app.stdout.text == ""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def serve_env(slack, model, tmp_path, port: int) -> dict[str, str]:
    return clean_env(
        SLACK_BOT_TOKEN=ids.BOT_TOKEN,
        SLACK_SIGNING_SECRET=ids.SIGNING_SECRET,
        SLACK_API_URL=slack.api_url,
        OPENAI_API_KEY=ids.OPENAI_API_KEY,
        OPENAI_BASE_URL=model.base_url,
        DATABASE_URL=f"sqlite:///{tmp_path / 'app.db'}",
        PORT=str(port),
    )


def test_serve_answers_healthz_and_stops_with_status_0_on_sigterm(slack, model, tmp_path):
    port = free_port()
    env = serve_env(slack, model, tmp_path, port)
    with AssistantProcess("serve", "--host", "127.0.0.1", env=env, cwd=tmp_path) as app:
        running = app.stderr.wait_for(r"Uvicorn running on http://127\.0\.0\.1:(\d+)")
        assert int(running.group(1)) == port
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
        try:
            connection.request("GET", "/healthz")
            response = connection.getresponse()
            body = json.loads(response.read())
        finally:
            connection.close()
        assert response.status == 200
        assert body == {"ok": True}  # nothing about the app's activity, to anyone who asks

        code = app.stop(signal.SIGTERM)
    assert code == 0, app.stderr.text
    assert "Application shutdown complete" in app.stderr.text
    assert "Traceback" not in app.stderr.text
    assert app.stdout.text == ""  # stdout is the trace's: no access log, no boot message
    assert "/healthz" not in app.stderr.text  # no access log on stderr either
    # SLACK_BOT_TOKEN is in the environment, where Bolt also looks: it warns of nothing.
    assert "will be unused" not in app.stderr.text
    assert [call.method for call in slack.calls] == ["auth.test"]  # the token, checked at start
    assert model.requests == []


def test_serve_refuses_to_start_with_a_token_slack_refuses(slack, model, tmp_path):
    slack.bot_token = "xoxb-the-one-slack-issued"  # the environment has another one
    env = serve_env(slack, model, tmp_path, free_port())
    with AssistantProcess("serve", "--host", "127.0.0.1", env=env, cwd=tmp_path) as app:
        code = app.stop(None)
    assert code == 2, app.stderr.text
    assert app.stderr.text == (
        "assistant serve: Slack refused a token:\n"
        "  SLACK_BOT_TOKEN: refused by Slack (invalid_auth)\n"
        "See docs/configuration.md.\n"
    )
    assert not (tmp_path / "app.db").exists()  # it stopped before opening anything
