"""`assistant eval --trajectory` end to end: the run's own agent loop driven against the fake
OpenAI over HTTP, its tools answered from the recording, nothing sent to the fake Slack; and
the demo's thread through the "before a prompt change" workflow of docs/evaluation.md."""

from __future__ import annotations

import json

import pytest

from assistant.eval.trajectory import NOT_AVAILABLE
from assistant.fakes import ids
from assistant.fakes.openai import responses as replies
from context.channels import ChannelConfig
from context.storage import open_store
from tests.eval.logs import POST, THREAD, history_call, log_json, post_call, store_thread
from tests.harness import prompt_log
from tests.process import clean_env, run_assistant

FINISH = ("finishRequest", {"reasoning": "Answered"})
RECORDED_HISTORY = "Thread history (1 message):"


@pytest.fixture
def env(model, slack):
    """The fake model; a fake Slack with a token, so any call to Slack would show."""
    return clean_env(
        OPENAI_API_KEY=ids.OPENAI_API_KEY,
        OPENAI_BASE_URL=model.base_url,
        OPENAI_MAX_RETRIES="0",
        SLACK_BOT_TOKEN=ids.BOT_TOKEN,
        SLACK_API_URL=slack.api_url,
    )


@pytest.fixture
def log_file(tmp_path):
    path = tmp_path / "lunch.json"
    path.write_text(log_json(), encoding="utf-8")
    return path


def trajectory(env, tmp_path, log_file, *args: str) -> dict:
    result = run_assistant(
        "eval", str(log_file), "--trajectory", "--json", "--concurrency", "1", *args,
        env=env, cwd=tmp_path,
    )  # fmt: skip
    assert "Traceback" not in result.stderr
    assert result.returncode == 0, result.stderr
    document: dict = json.loads(result.stdout)
    return document


def only_score(document: dict) -> dict:
    [case] = document["cases"]
    [score] = case["results"][0]["scores"]
    assert isinstance(score, dict)
    return score


def test_a_whole_answer_is_run_onward_with_the_recorded_read_and_nothing_is_posted(
    env, model, slack, log_file, tmp_path
):
    model.script(
        replies.tool_calls(history_call()),
        replies.tool_calls(post_call()),
        replies.tool_calls(FINISH),
    )
    document = trajectory(env, tmp_path, log_file, "--match-args")
    score = only_score(document)
    assert score["passed"] and score["same_kind"]
    assert score["checks"]["path"] == ["getThreadHistory", "postMessage", "finishRequest"]
    assert score["checks"]["ended"] == "finishRequest"
    assert score["checks"]["steps"] == 3
    # The case starts at the person's message; each step's prompt holds the steps before it,
    # the history read answered with the recorded result, the post recorded as the answer.
    logs = [prompt_log(request) for request in model.requests]
    assert [len(log) for log in logs] == [2, 4, 5]
    assert logs[1][3]["content"].startswith(RECORDED_HISTORY)
    assert logs[2][4]["content"]["text"] == POST
    assert not any(call.method == "chat.postMessage" for call in slack.calls)
    assert slack.calls == []


def test_a_call_the_recording_does_not_have_is_answered_not_available(
    env, model, slack, log_file, tmp_path
):
    # The recording read 20 messages newest first; 5 oldest first is another call.
    other_read = ("getThreadHistory", {"reasoning": "Oldest", "ascending": True, "limit": 5})
    model.script(
        replies.tool_calls(other_read),
        replies.tool_calls(post_call(), FINISH),
    )
    score = only_score(trajectory(env, tmp_path, log_file, "--match-args"))
    answered = prompt_log(model.requests[1])[3]["content"]
    assert answered == NOT_AVAILABLE.format(name="getThreadHistory")
    # By tool names the path is the recorded one; with their arguments it is not.
    assert score["checks"]["path"] == ["getThreadHistory", "postMessage", "finishRequest"]
    assert not score["passed"]
    assert slack.calls == []


def test_the_step_cap_and_the_length_factor_stop_a_path(env, model, log_file, tmp_path):
    model.script(*[replies.tool_calls(history_call()) for _ in range(2)])
    score = only_score(trajectory(env, tmp_path, log_file, "--max-steps", "2"))
    assert len(model.requests) == 2
    assert score["checks"]["ended"] == "step cap"
    assert score["checks"]["path"] == ["getThreadHistory", "getThreadHistory"]
    assert not score["passed"]
    assert any("ended without finishRequest" in problem for problem in score["problems"])

    # Three recorded calls times 0.5: two steps at most, whatever --max-steps allows.
    model.script(*[replies.tool_calls(history_call()) for _ in range(2)])
    score = only_score(trajectory(env, tmp_path, log_file, "--length-factor", "0.5"))
    assert len(model.requests) == 4
    assert score["checks"]["ended"] == "length"


def test_superset_passes_a_longer_path_that_strict_fails(env, model, log_file, tmp_path):
    longer = [history_call(), history_call("Again"), post_call(), FINISH]
    model.script(*[replies.tool_calls(call) for call in longer])
    assert not only_score(trajectory(env, tmp_path, log_file))["passed"]
    model.script(*[replies.tool_calls(call) for call in longer])
    assert only_score(trajectory(env, tmp_path, log_file, "--match", "superset"))["passed"]


def test_path_options_go_with_trajectory(env, log_file, tmp_path):
    result = run_assistant("eval", str(log_file), "--match", "subset", env=env, cwd=tmp_path)
    assert result.returncode == 2
    assert "go with --trajectory" in result.stderr


def test_the_demo_thread_before_a_prompt_change(tmp_path):
    """The commands of docs/evaluation.md, "Before a prompt change"."""
    played = run_assistant(
        "demo", "--database", str(tmp_path / "demo.db"), env=clean_env(), cwd=tmp_path
    )
    assert played.returncode == 0, played.stderr
    env = clean_env(DATABASE_URL=f"sqlite:///{tmp_path / 'demo.db'}")
    (tmp_path / "persona.txt").write_text("You are Aya, brief and precise.\n", encoding="utf-8")
    commands = [
        ["eval", "--all", "--demo-model", "--trajectory", "--save-run", "runs/before"],
        ["eval", "--all", "--demo-model", "--trajectory", "--prompt-file", "persona.txt",
         "--trials", "2", "--save-run", "runs/after"],
        ["eval", "rescore", "runs/after", "--demo-model", "--judge", "demo-model",
         "--match", "superset", "--save-run", "runs/judged"],
        ["eval", "diff", "runs/before", "runs/judged", "--fail-on-regression"],
    ]  # fmt: skip
    for command in commands:
        result = run_assistant(*command, env=env, cwd=tmp_path)
        assert result.returncode == 0, (command, result.stderr)
    assert "0 regressed, 0 improved, 2 unchanged" in result.stdout
    manifest = json.loads((tmp_path / "runs/judged/manifest.json").read_text("utf-8"))
    assert manifest["trajectory"]["match"] == "superset"
    lines = (tmp_path / "runs/judged/results-1.jsonl").read_text("utf-8").splitlines()
    first = json.loads(lines[0])
    assert [t["verdict"] for t in first["trials"]] == ["as good", "as good"]
    assert first["answers"][0]["ended"] == "finishRequest"
    assert [a["call"]["toolCall"] for a in first["answers"][0]["calls"]] == [
        "getThreadHistory",
        "postMessage",
        "finishRequest",
    ]


def test_a_model_that_fails_mid_path_is_an_error_not_a_result(env, model, log_file, tmp_path):
    model.script(replies.tool_calls(history_call()), replies.error(500))
    result = run_assistant(
        "eval", str(log_file), "--trajectory", "--json", "--concurrency", "1",
        env=env, cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 1
    document = json.loads(result.stdout)
    assert document["summary"][0]["errors"] == 1
    assert only_score(document)["kind"] == "error"


def test_every_step_asks_the_channel_s_own_model(env, model, store_url, tmp_path):
    """As a run in the channel would; a stored thread's vote on the post carries over."""
    store = open_store(store_url)
    try:
        store_thread(store, vote="bad")
        own = ChannelConfig(team=THREAD.team, channel=THREAD.channel, model="gpt-channel")
        store.set_channel_config(own)
    finally:
        store.close()
    model.script(
        replies.tool_calls(history_call()),
        replies.tool_calls(post_call("Que tal um ramen, <@U0BOB>? https://example.com/risoto")),
        replies.tool_calls(FINISH),
    )
    env = {**env, "DATABASE_URL": store_url}
    document = trajectory(env, tmp_path, str(THREAD))
    assert [r["model"] for r in model.requests] == ["gpt-channel"] * 3
    [case] = document["cases"]
    assert case["results"][0]["feedback"] == "beat"
    # A path to beat passes when it is not the recorded one again: another post.
    assert only_score(document)["passed"]
