"""`assistant demo`: the bot at work with no Slack workspace and no OpenAI key, end to end in
a subprocess, leaving a store the other commands read; the fakes it runs on are installed
with the package and serve loopback only."""

from __future__ import annotations

import itertools
import json
import re
import tomllib

import pytest
from setuptools import find_packages

from assistant.fakes import FakeOpenAI, FakeSlack
from assistant.fakes.demo import demo_reply
from assistant.fakes.openai import responses as replies
from context.canonical import load_log
from tests.cli import ROOT
from tests.mcp_servers import STDIO_COMMAND
from tests.process import clean_env, run_assistant

THREAD = re.compile(r"answers in thread (\S+/\S+/\S+), kept in the store")


def refusals_of_sessions(caplog) -> list[str]:
    """The warnings that Slack refused agent sessions (the command runs in this process:
    its log records are caplog's, not its stderr's)."""
    return [r.getMessage() for r in caplog.records if "refused agent sessions" in r.getMessage()]


def test_demo_plays_a_conversation_and_leaves_it_in_the_store(tmp_path, caplog):
    # Real-looking keys pointing nowhere: the demo must use neither.
    env = clean_env(
        SLACK_BOT_TOKEN="xoxb-not-for-the-demo",
        SLACK_API_URL="http://127.0.0.1:9/api/",
        OPENAI_API_KEY="sk-not-for-the-demo",
        OPENAI_BASE_URL="http://127.0.0.1:9/v1",
        ASSISTANT_STREAM="auto",  # as a person runs it: the steps shown as task cards
    )
    demo = run_assistant("demo", env=env, cwd=tmp_path)
    assert demo.returncode == 0, demo.stderr
    assert "Traceback" not in demo.stderr
    # Its fake Slack takes the agent sessions' methods, as Slack does for the app: no warning
    # of a refusal the demo made up.
    assert refusals_of_sessions(caplog) == []
    thread = THREAD.search(demo.stderr).group(1)
    assert (tmp_path / "assistant.db").exists()  # the default store, where the others look

    # The trace printed is the thread's, as `show` renders it from the store.
    shown = run_assistant("show", thread, env=env, cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == demo.stdout
    # A mention answered after reading the thread's history, then a follow-up.
    log = load_log(run_assistant("export", thread, env=env, cwd=tmp_path).stdout).entries
    what = [e.content.toolCall if e.role == "assistant" else e.role for e in log]
    assert what == [
        "system",
        "user",
        "getThreadHistory",
        "system",
        "postMessage",
        "finishRequest",
        "user",
        "releases__checklist",  # the demo's MCP server's tool (assistant/fakes/mcp_release.py)
        "system",
        "postMessage",
        "finishRequest",
    ]
    assert log[8].content.startswith("Result of releases__checklist (entry 7)")
    assert log[9].content.text.startswith("Before shipping release 2.4, check:")
    assert "I reviewed and approved the migration" in log[3].content
    assert log[4].content.text.startswith("Where the release stands")
    # Every point says something: the steps' own message is not read back as a blank one.
    points = [line for line in log[4].content.text.splitlines() if line.startswith("•")]
    assert len(points) == 2 and not any(point.rstrip().endswith(":") for point in points)
    listed = run_assistant("threads", "--json", env=env, cwd=tmp_path)
    assert [json.loads(line)["thread"] for line in listed.stdout.splitlines()] == [thread]

    # Replayed on the same scripted model, cut after the mention: the same calls again.
    report = tmp_path / "report.jsonl"
    replay = run_assistant(
        "replay",
        thread,
        "--at",
        "2",
        "--demo-model",
        "--report",
        str(report),
        env=env,
        cwd=tmp_path,
    )
    assert replay.returncode == 0, replay.stderr
    first = json.loads(report.read_text(encoding="utf-8").splitlines()[0])
    assert first["replay"]["calls"] == first["recorded"]["calls"]
    assert first["replay"]["texts"] == first["recorded"]["texts"]

    # Cut before the follow-up's MCP call: the replay makes it again, and gets the result the
    # run got without calling any server (a replay carries no tool of a server out).
    report = tmp_path / "report-mcp.jsonl"
    replay = run_assistant(
        "replay", thread, "--at", "7", "--demo-model", "--report", str(report),
        env=env, cwd=tmp_path,
    )  # fmt: skip
    assert replay.returncode == 0, replay.stderr
    again = json.loads(report.read_text(encoding="utf-8").splitlines()[0])
    assert again["replay"]["calls"] == again["recorded"]["calls"]
    assert again["replay"]["calls"][0] == "releases__checklist"
    assert again["replay"]["texts"] == again["recorded"]["texts"]

    # A second demo is a new thread; --database takes a file.
    again = run_assistant("demo", "--database", "other.db", env=env, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "DATABASE_URL=sqlite:///" in again.stderr
    assert THREAD.search(again.stderr).group(1) != thread
    assert (tmp_path / "other.db").exists()


@pytest.mark.parametrize("fake", [FakeSlack, FakeOpenAI])
def test_the_fakes_serve_loopback_only(fake):
    with pytest.raises(ValueError, match=re.escape("serves on loopback only, not on '0.0.0.0'")):
        fake(host="0.0.0.0")
    with fake(host="localhost") as served:
        assert served.url.startswith("http://localhost:")


def test_the_fakes_are_installed_with_the_package():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    found = project["tool"]["setuptools"]["packages"]["find"]
    packages = find_packages(str(ROOT), include=found["include"])
    assert {"assistant.fakes", "assistant", "assistant.commands", "context"} <= set(packages)
    # No generic top-level package beside the two the design has (issue: pip's warning).
    assert {name for name in packages if "." not in name} == {"assistant", "context"}
    # What the fakes import is installed with the package too.
    assert any(dep.startswith("aiohttp>=") for dep in project["project"]["dependencies"])


@pytest.mark.parametrize("tool_choice", ["honoured", "ignored"])
def test_demo_plays_against_a_server_of_one_s_own(tmp_path, tool_choice, caplog):
    # The demo's model on a server of its own, as llama.cpp plays it: the demo knows it only
    # by its URL. A server ignoring tool_choice is asked as JSON from the check on.
    with FakeOpenAI(default=demo_reply) as server:
        server.server.kind, server.server.tool_choice = "llama.cpp", tool_choice
        env = clean_env(OPENAI_API_KEY="sk-local", OPENAI_BASE_URL="http://127.0.0.1:9/v1")
        demo = run_assistant("demo", "--model-url", server.base_url, "--model", "smollm2",
                             env=env, cwd=tmp_path)  # fmt: skip
        asked = server.requests
    assert demo.returncode == 0, demo.stderr
    assert "model check of http://127.0.0.1:" in demo.stderr
    assert refusals_of_sessions(caplog) == []
    assert {r["model"] for r in asked} == {"smollm2"}
    calls = asked[2:]  # after the check's two probes
    in_json = ["response_format" in r for r in calls]
    assert in_json == [tool_choice == "ignored"] * len(calls)
    thread = THREAD.search(demo.stderr).group(1)
    log = load_log(run_assistant("export", thread, env=env, cwd=tmp_path).stdout).entries
    what = [e.content.toolCall for e in log if e.role == "assistant"]
    assert what == ["getThreadHistory", "postMessage", "finishRequest", "releases__checklist",
                    "postMessage", "finishRequest"]  # fmt: skip


def test_demo_model_url_needs_a_model_and_a_url(tmp_path):
    env = clean_env()
    alone = run_assistant("demo", "--model-url", "http://127.0.0.1:9/v1", env=env, cwd=tmp_path)
    assert alone.returncode == 2 and "--model-url and --model go together" in alone.stderr
    bad = run_assistant("demo", "--model-url", "ftp://u:secret@x", "--model", "m", env=env,
                        cwd=tmp_path)  # fmt: skip
    assert bad.returncode == 2 and "not an http(s) URL" in bad.stderr
    assert "secret" not in bad.stderr


def test_demo_offers_the_servers_of_the_mcp_file_and_says_their_problems(tmp_path):
    """MCP tried without Slack (issue 43, point 14): ASSISTANT_MCP_FILE's servers beside the
    demo's own, offered to the model, their check said at start."""
    path = tmp_path / "mcp.json"
    servers = {"shop": {"command": STDIO_COMMAND}, "nope": {"command": ["no-such-command-z"]}}
    path.write_text(json.dumps({"servers": servers}))
    with FakeOpenAI(default=demo_reply) as server:
        env = clean_env(OPENAI_API_KEY="sk-local", ASSISTANT_MCP_FILE=str(path))
        demo = run_assistant("demo", "--model-url", server.base_url, "--model", "smollm2",
                             env=env, cwd=tmp_path)  # fmt: skip
        asked = server.requests
    assert demo.returncode == 0, demo.stderr
    assert (
        "MCP check: 1 failing: nope connected: no: its command 'no-such-command-z' was not found"
        in demo.stderr
    )
    offered = {t["function"]["name"] for t in asked[-1]["tools"]}
    assert {"releases__checklist", "shop__lookup_order", "shop__refuse"} <= offered
    thread = THREAD.search(demo.stderr).group(1)
    log = load_log(run_assistant("export", thread, env=env, cwd=tmp_path).stdout).entries
    assert "releases__checklist" in [e.content.toolCall for e in log if e.role == "assistant"]


NOT_IMPLEMENTED = b"<html><head><title>501 Not Implemented</title></head><body>no</body></html>"


@pytest.mark.parametrize("server", ["nothing", "HTTP 501"])
def test_demo_against_a_server_that_cannot_answer_exits_1_and_says_why(tmp_path, server):
    # Apologies are posted in the thread, and the thread is kept; but no answer was given.
    env = clean_env(OPENAI_MAX_RETRIES="0")
    with FakeOpenAI(default=replies.Raw(NOT_IMPLEMENTED, "text/html", 501)) as answers_501:
        url = "http://127.0.0.1:9/v1" if server == "nothing" else answers_501.base_url
        demo = run_assistant("demo", "--model-url", url, "--model", "m", env=env, cwd=tmp_path)
    assert demo.returncode == 1, demo.stderr
    assert "Traceback" not in demo.stderr
    assert "0 answers and 2 apologies in thread " in demo.stderr
    why = "could not be reached" if server == "nothing" else "501"
    [line] = [line for line in demo.stderr.splitlines() if "not answered:" in line]
    assert line.startswith("assistant demo: 2 messages not answered: the model call failed: ")
    assert why in line
    assert demo.stderr.rstrip().endswith("assistant demo: expected 2 answers, got 0")


def test_an_answer_that_posts_then_ends_at_the_step_cap_is_an_answer_said_to_end_early(tmp_path):
    """A small model's run often ends at the step cap after its post: the person got the
    model's post, so the demo played (exit 0), and says how the answers ended."""
    said = itertools.count()

    def posts_without_end(request: dict[str, object]) -> replies.Response:
        text = f"Part {next(said)} of the answer."
        return replies.tool_calls(("postMessage", {"text": text, "reasoning": "answering"}))

    env = clean_env(OPENAI_MAX_RETRIES="0", ASSISTANT_MAX_STEPS="2")
    with FakeOpenAI(default=posts_without_end) as server:
        demo = run_assistant("demo", "--model-url", server.base_url, "--model", "m", env=env,
                             cwd=tmp_path)  # fmt: skip
    assert demo.returncode == 0, demo.stderr
    assert "2 answers in thread " in demo.stderr
    assert "apologies" not in demo.stderr
    assert "assistant demo: 2 answers ended early: stopped after 2 steps without finishRequest" in (
        demo.stderr
    )
