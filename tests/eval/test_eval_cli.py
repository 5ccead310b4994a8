"""`assistant eval`: recorded decisions asked again of the fake model over HTTP, scored; its
exit statuses, its outputs, and eval sets saved and run again."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from assistant.eval.scores import wilson
from assistant.fakes import ids
from assistant.fakes.openai import responses as replies
from assistant.fakes.openai.server import FakeOpenAI
from assistant.model.instructions import SYSTEM_MESSAGE
from assistant.model.judging import RUBRIC
from context.channels import ChannelConfig
from context.entry import UserContent
from context.storage import ThreadKey, open_store
from context.storage.tables import moment
from context.toolcalls import FinishRequest
from tests.commands.test_store_cli import backdate
from tests.eval.logs import POST, QUESTION, THREAD, history_call, log_json, post_call, store_thread
from tests.harness import prompt_log
from tests.process import clean_env, run_assistant


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


def evaluate(env, tmp_path, *args: str):
    result = run_assistant("eval", *args, "--concurrency", "1", env=env, cwd=tmp_path)
    assert "Traceback" not in result.stderr
    return result


def results(result) -> dict:
    return json.loads(result.stdout)


def test_a_model_that_agrees_passes_every_case_and_nothing_reaches_slack(
    env, model, slack, log_file, tmp_path
):
    model.script(replies.tool_calls(history_call()), replies.tool_calls(post_call()))
    result = evaluate(env, tmp_path, str(log_file), "--json", "--min-pass", "1")
    assert result.returncode == 0, result.stderr
    document = results(result)
    assert [case["case"] for case in document["cases"]] == [f"{log_file}@2", f"{log_file}@4"]
    tokens = {"prompt_tokens": 0, "completion_tokens": 0}  # whatever the fake counts
    assert document["summary"][0] | tokens == {
        "cases": 2,
        "trials_per_case": 1,
        "pass@1": 1.0,
        "pass^k": 1.0,
        "errors": 0,
        "prompt_tokens": 0,
        "completion_tokens": 0,
    }
    # Each case is asked with the log as it stood before its decision: entries 0-1, then 0-3.
    logs = [prompt_log(request) for request in model.requests]
    assert [[entry["index"] for entry in log] for log in logs] == [[0, 1], [0, 1, 2, 3]]
    assert all(request["tool_choice"] == "required" for request in model.requests)
    assert slack.calls == []
    post = document["cases"][1]["results"][0]["scores"][0]
    assert post["checks"] == {
        "language_kept": True,
        "people_kept": True,
        "links_kept": True,
        "length_ratio": 1.0,
    }


def test_a_model_that_disagrees_fails_and_min_pass_sets_the_exit_status(
    env, model, log_file, tmp_path
):
    for min_pass, status in (("0.5", 0), ("0.51", 1)):
        # Case 1 agrees; case 2 reads the history again where the log posted.
        model.script(replies.tool_calls(history_call()), replies.tool_calls(history_call()))
        result = evaluate(env, tmp_path, str(log_file), "--json", "--min-pass", min_pass)
        assert result.returncode == status, result.stderr
        document = results(result)
        assert document["summary"][0]["pass^k"] == 0.5
        second = document["cases"][1]["results"][0]
        assert second["reference_kind"] == "post"
        assert second["scores"][0] | {"checks": None} == {
            "kind": "read history",
            "valid": True,
            "same_kind": False,
            "passed": False,
            "problems": [],
            "checks": None,
            "verdict": None,
            "reason": None,
        }
    assert "below --min-pass 0.51" in result.stderr


def test_calls_that_do_not_fit_and_plain_text_are_not_valid(env, model, log_file, tmp_path):
    model.script(
        replies.tool_calls(("getThreadHistory", {"limit": "many", "reasoning": "x"})),
        replies.text("Risoto!"),
    )
    result = evaluate(env, tmp_path, str(log_file), "--json")
    assert result.returncode == 0, result.stderr
    first, second = (case["results"][0]["scores"][0] for case in results(result)["cases"])
    assert first["kind"] == "invalid call" and not first["valid"]
    assert "the arguments of getThreadHistory do not fit its schema" in first["problems"][0]
    assert second["kind"] == "text" and not second["valid"] and not second["passed"]


def test_a_model_that_fails_is_an_error_and_exit_status_1(env, model, log_file, tmp_path):
    model.script(replies.tool_calls(history_call()), replies.error(500))
    result = evaluate(env, tmp_path, str(log_file), "--json")
    assert result.returncode == 1
    document = results(result)
    assert document["summary"][0]["errors"] == 1
    failed = document["cases"][1]["results"][0]
    assert failed["scores"][0]["kind"] == "error"
    assert failed["scores"][0]["problems"][0].startswith("the model call failed")
    assert "1 trials could not ask the model" in result.stderr


def test_pass_k_and_pass_at_1_on_a_known_set(env, model, log_file, tmp_path):
    # Case 1: 3 of 3 trials pass; case 2: 2 of 3.
    model.script(
        *[replies.tool_calls(history_call())] * 3,
        replies.tool_calls(post_call()),
        replies.tool_calls(history_call()),
        replies.tool_calls(post_call("Risoto.")),
    )
    result = evaluate(env, tmp_path, str(log_file), "--json", "--trials", "3")
    assert result.returncode == 0, result.stderr
    document = results(result)
    summary = document["summary"][0]
    assert summary["pass@1"] == round(5 / 6, 4)
    assert summary["pass^k"] == 0.5
    assert summary["pass@1_interval"] == [round(v, 4) for v in wilson(5, 6)]
    assert summary["pass^k_interval"] == [round(v, 4) for v in wilson(1, 2)]
    second = document["cases"][1]["results"][0]
    assert (second["passes"], second["pass@1"], second["pass^k"]) == (2, 0.6667, False)
    # The step shown for a case is one that failed, in the trace's format.
    assert "🔧 getThreadHistory" in second["answer"]
    assert "💬 postMessage:" in second["reference"]


def test_the_table_and_the_markdown_report(env, model, log_file, tmp_path):
    model.script(replies.tool_calls(history_call()), replies.tool_calls(post_call("Pizza!")))
    report = tmp_path / "eval.md"
    result = evaluate(env, tmp_path, str(log_file), "--report", str(report))
    assert result.returncode == 0, result.stderr
    rows = result.stdout.splitlines()
    assert rows[0].split() == ["case", "feedback", "reference", "gpt-4o-mini"]
    assert rows[1].split()[1:] == ["read", "history", "1/1", "read", "history"]
    assert rows[-1] == "gpt-4o-mini: 2 cases x 1 trials: pass@1 1.00, pass^1 1.00, 0 errors"
    text = report.read_text(encoding="utf-8")
    assert "## Summary" in text
    assert f'💬 postMessage:\n   "{POST}"' in text  # the recorded step
    assert '💬 postMessage:\n   "Pizza!"' in text  # the new one


def test_persona_and_temperature_reach_the_request(env, model, log_file, tmp_path):
    persona = tmp_path / "persona.txt"
    persona.write_text("You are Bo, terse.", encoding="utf-8")
    model.script(replies.tool_calls(history_call()), replies.tool_calls(post_call()))
    args = ("--prompt-file", str(persona), "--temperature", "0.2", "--model", "gpt-other")
    result = evaluate(env, tmp_path, str(log_file), *args)
    assert result.returncode == 0, result.stderr
    for request in model.requests:
        assert request["temperature"] == 0.2 and request["model"] == "gpt-other"
        assert prompt_log(request)[0]["content"] == "You are Bo, terse."
        assert request["messages"][0] == {"role": "system", "content": SYSTEM_MESSAGE}


def test_instructions_are_replaced_for_the_configuration_that_asks(env, model, log_file, tmp_path):
    (tmp_path / "rules.txt").write_text("Call tools. Be brief.", encoding="utf-8")
    config = {"name": "brief", "instructions_file": "rules.txt", "temperature": 0}
    (tmp_path / "brief.json").write_text(json.dumps(config), encoding="utf-8")
    model.script(*[replies.tool_calls(history_call()), replies.tool_calls(post_call())] * 2)
    report = tmp_path / "eval.md"
    result = evaluate(
        env, tmp_path, str(log_file), "--against", "brief.json", "--report", "eval.md"
    )
    assert result.returncode == 0, result.stderr
    ours, theirs = model.requests[:2], model.requests[2:]
    assert all(r["messages"][0]["content"] == SYSTEM_MESSAGE for r in ours)
    assert all("temperature" not in r for r in ours)  # the service's default unless asked
    assert all(r["messages"][0]["content"] == "Call tools. Be brief." for r in theirs)
    assert all(r["temperature"] == 0 for r in theirs)
    text = report.read_text(encoding="utf-8")
    assert (
        "- **brief**: model `gpt-4o-mini` (a channel's own where it sets one), "
        "persona each log's own (entry 0), " in text
    )
    assert "instructions rules.txt, temperature 0" in text
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"model": 5}), encoding="utf-8")
    refused = evaluate(env, tmp_path, str(log_file), "--against", "bad.json")
    assert refused.returncode == 2
    assert "bad.json: base_url, instructions_file, model, name, prompt_file are strings" in (
        refused.stderr
    )


def test_against_sets_two_configurations_side_by_side_worse_first(env, model, log_file, tmp_path):
    model.script(
        # gpt-new: case 1 wrong, case 2 right; gpt-old: both right.
        replies.tool_calls(post_call()),
        replies.tool_calls(post_call()),
        replies.tool_calls(history_call()),
        replies.tool_calls(post_call()),
    )
    args = ("--model", "gpt-new", "--against", "gpt-old", "--json")
    result = evaluate(env, tmp_path, str(log_file), *args)
    assert result.returncode == 0, result.stderr
    document = results(result)
    assert [c["name"] for c in document["configs"]] == ["gpt-new", "gpt-old"]
    assert [request["model"] for request in model.requests] == ["gpt-new"] * 2 + ["gpt-old"] * 2
    assert [(c["case"], c["winner"]) for c in document["cases"]] == [
        (f"{log_file}@2", "gpt-old"),
        (f"{log_file}@4", "tie"),
    ]


def test_a_thumbs_down_step_is_one_to_beat(env, model, store_url, tmp_path):
    store = open_store(store_url)
    try:
        store_thread(store, vote="bad")
        before = store.entries(THREAD)
    finally:
        store.close()
    env = {**env, "DATABASE_URL": store_url}
    # The same post again does not beat it; another does.
    model.script(
        replies.tool_calls(history_call()),
        replies.tool_calls(post_call()),
        replies.tool_calls(history_call()),
        replies.tool_calls(post_call("Que tal uma feijoada?")),
    )
    first = results(evaluate(env, tmp_path, "--all", "--feedback", "bad", "--json"))
    second = results(evaluate(env, tmp_path, str(THREAD), "--json"))
    for document, passed in ((first, False), (second, True)):
        case = document["cases"][1]["results"][0]
        assert (case["feedback"], case["scores"][0]["passed"]) == ("beat", passed)
    assert results(evaluate(env, tmp_path, "--all", "--feedback", "good", "--json"))["cases"] == []
    store = open_store(store_url)
    try:
        assert store.entries(THREAD) == before  # nothing written to the thread
    finally:
        store.close()


def test_a_saved_set_run_again_gives_the_same_cases(env, model, store_url, tmp_path):
    store = open_store(store_url)
    try:
        store_thread(store, vote="good")
    finally:
        store.close()
    env = {**env, "DATABASE_URL": store_url}
    saved = evaluate(env, tmp_path, str(THREAD), "--save", str(tmp_path / "set"))
    assert saved.returncode == 0, saved.stderr
    assert saved.stdout == f"eval: saved 2 cases of 1 logs in {tmp_path / 'set'}\n"
    manifest = json.loads((tmp_path / "set" / "manifest.json").read_text(encoding="utf-8"))
    assert (manifest["cases"], manifest["files"]) == (2, ["logs/00001.json"])

    outcomes = []
    for source in (str(THREAD), str(tmp_path / "set")):
        model.script(replies.tool_calls(history_call()), replies.tool_calls(post_call()))
        result = evaluate(env, tmp_path, source, "--json")
        assert result.returncode == 0, result.stderr
        outcomes.append(results(result)["cases"])
    assert outcomes[0] == outcomes[1]
    assert [c["results"][0]["feedback"] for c in outcomes[0]] == [None, "keep"]
    assert [prompt_log(r) for r in model.requests[:2]] == [
        prompt_log(r) for r in model.requests[2:]
    ]
    # A set is not written over.
    again = evaluate(env, tmp_path, str(THREAD), "--save", str(tmp_path / "set"))
    assert again.returncode == 2
    assert "exists and is not an empty directory" in again.stderr


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--trials", "0"), "must be from 1 to 100"),
        (("--min-pass", "1.5"), "must be from 0 to 1"),
        (("--temperature", "nan"), "must be from 0 to 2"),
        (("--channel", "C1"), "filter --all"),
        (("missing.json",), "cannot read missing.json"),
        (("broken.json",), "broken.json: not a valid log: entry 1"),
        (("-",), "not standard input"),
    ],
)
def test_bad_input_is_exit_status_2(env, log_file, tmp_path, args, said):
    broken = json.loads(log_json())
    broken[1]["role"] = "assistant"
    (tmp_path / "broken.json").write_text(json.dumps(broken), encoding="utf-8")
    inputs = () if args[0] in ("missing.json", "broken.json", "-") else (str(log_file),)
    result = evaluate(env, tmp_path, *inputs, *args)
    assert result.returncode == 2
    assert said in result.stderr


def test_a_set_whose_manifest_points_outside_it_is_refused(env, tmp_path):
    (tmp_path / "set").mkdir()
    manifest = {"format": "assistant-eval-set", "version": 1, "cases": 1, "files": ["../x.json"]}
    (tmp_path / "set" / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    result = evaluate(env, tmp_path, str(tmp_path / "set"))
    assert result.returncode == 2
    assert "`files` must list relative paths inside the set" in result.stderr


def test_the_demo_thread_is_a_ready_eval_set(tmp_path):
    """The two commands of docs/evaluation.md and the README."""
    env = clean_env()
    played = run_assistant("demo", "--database", str(tmp_path / "demo.db"), env=env, cwd=tmp_path)
    assert played.returncode == 0, played.stderr
    env = clean_env(DATABASE_URL=f"sqlite:///{tmp_path / 'demo.db'}")
    result = run_assistant(
        "eval", "--all", "--demo-model", "--min-pass", "1", env=env, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    # Six decisions: the follow-up's call of the demo's MCP tool among them, offered again.
    assert result.stdout.splitlines()[-1] == (
        "demo model: 6 cases x 1 trials: pass@1 1.00, pass^1 1.00, 0 errors"
    )


def test_the_demo_model_judges_and_is_never_named_as_a_real_model(tmp_path):
    """The demo's runs, `replay`/`eval --demo-model` and their reports name the scripted
    model as the demo's; it can judge; no real model's name is put on it."""
    env = clean_env()
    played = run_assistant("demo", "--database", str(tmp_path / "demo.db"), env=env, cwd=tmp_path)
    assert played.returncode == 0, played.stderr
    env = clean_env(DATABASE_URL=f"sqlite:///{tmp_path / 'demo.db'}")
    report = tmp_path / "report.md"
    judged = run_assistant(
        "eval", "--all", "--demo-model", "--judge", "demo-model", "--json", "--report",
        str(report), env=env, cwd=tmp_path,
    )  # fmt: skip
    assert judged.returncode == 0, judged.stderr
    assert "Traceback" not in judged.stderr
    document = results(judged)
    assert document["configs"][0]["model"] == "demo-model"
    verdicts = [
        score["verdict"]
        for case in document["cases"]
        for score in case["results"][0]["scores"]
        if score["verdict"] is not None
    ]
    assert verdicts == ["as good", "as good"]  # the two posts, the same again
    # No real model's name, anywhere it could be shown.
    usage = run_assistant("usage", "--by", "model", "--json", env=env, cwd=tmp_path)
    shown = judged.stdout + report.read_text(encoding="utf-8") + usage.stdout
    assert "demo-model" in usage.stdout
    assert "gpt-" not in shown
    # Another model's name on the demo's server, evaluated or judging: refused, not scored.
    for args, said in (
        (("--against", "gpt-4o"), "--against gpt-4o: with --demo-model its server is the "
                                  "demo's scripted model (demo-model), not gpt-4o"),
        (("--judge", "gpt-4o"), "--judge gpt-4o: with --demo-model its server is the demo's "
                                "scripted model: --judge demo-model"),
        (("--model", "gpt-4o"), "--model names a model of the server; --demo-model is the "
                                "demo's own"),
    ):  # fmt: skip
        refused = run_assistant("eval", "--all", "--demo-model", *args, env=env, cwd=tmp_path)
        assert refused.returncode == 2, refused.stderr
        assert said in refused.stderr


def test_an_eval_with_no_cases_exits_1_unless_allowed(env, model, tmp_path):
    asked_only = tmp_path / "asked.json"
    asked_only.write_text(
        json.dumps(json.loads(log_json())[:2]), encoding="utf-8"
    )  # a persona and a question: no decision yet
    empty = evaluate(env, tmp_path, str(asked_only))
    assert empty.returncode == 1
    assert "eval: no cases: the inputs hold no decision to evaluate" in empty.stderr
    allowed = evaluate(env, tmp_path, str(asked_only), "--allow-empty")
    assert allowed.returncode == 0, allowed.stderr
    assert "eval: no cases" in allowed.stderr
    assert model.requests == []


def test_the_cost_is_estimated_and_a_large_run_asks_to_go_on(env, model, log_file, tmp_path):
    prices = json.dumps({"gpt-4o-mini": {"input": 0.15, "output": 0.6}})
    env = {**env, "ASSISTANT_PRICES": prices}
    model.script(replies.tool_calls(history_call()), replies.tool_calls(post_call()))
    small = evaluate(env, tmp_path, str(log_file))
    assert small.returncode == 0, small.stderr
    assert "eval: estimate: 2 cases, 2 model calls, about " in small.stderr
    assert "answer tokens, $0.00\n" in small.stderr
    # Over 200 calls: not run without --yes (standard input is no terminal to ask).
    large = evaluate(env, tmp_path, str(log_file), "--trials", "100", "--against", "gpt-x")
    assert large.returncode == 2
    assert "400 model calls" in large.stderr and "no price for gpt-x" in large.stderr
    assert "400 model calls is over 200: add --yes to run" in large.stderr
    assert len(model.requests) == 2
    model.default = replies.tool_calls(history_call())
    args = ("--trials", "100", "--against", "gpt-x", "--yes", "--concurrency", "8", "--json")
    run = run_assistant("eval", str(log_file), *args, env=env, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert [summary["cases"] for summary in json.loads(run.stdout)["summary"]] == [2, 2]
    assert len(model.requests) == 2 + 400


def test_the_judge_s_verdict_decides_a_post(env, model, log_file, tmp_path):
    with FakeOpenAI() as judge:
        judge.script(
            replies.text('{"verdict": "worse", "reason": "Pizza is not what was asked"}'),
            replies.text('{"verdict": "better", "reason": "Shorter"}'),
            replies.text("I think it is fine"),
        )
        args = ("--judge", "gpt-judge", "--judge-base-url", judge.base_url, "--json")
        outcomes = []
        for status in (0, 0, 1):
            model.script(
                replies.tool_calls(history_call()), replies.tool_calls(post_call("Pizza!"))
            )
            result = evaluate(env, tmp_path, str(log_file), *args)
            assert result.returncode == status, result.stderr
            outcomes.append(results(result)["cases"][1]["results"][0]["scores"][0])
        asked = judge.requests[0]
    assert [(o["verdict"], o["passed"]) for o in outcomes] == [
        ("worse", False),
        ("better", True),
        (None, False),
    ]
    assert outcomes[0]["reason"] == "Pizza is not what was asked"
    assert outcomes[2]["problems"] == ["the judge's answer is not a verdict: 'I think it is fine'"]
    # Only the case where both sides post is judged, on the judge's server, by the rubric.
    assert len(judge.requests) == 3 and len(model.requests) == 6
    assert asked["model"] == "gpt-judge"
    assert asked["messages"][0] == {"role": "system", "content": RUBRIC}
    assert json.loads(asked["messages"][1]["content"]) == {
        "question": QUESTION,
        "REFERENCE": POST,
        "CANDIDATE": "Pizza!",
    }


def test_a_post_in_another_language_than_the_question_fails(env, model, log_file, tmp_path):
    model.script(
        replies.tool_calls(history_call()),
        replies.tool_calls(post_call("How about a mushroom risotto with <@U0BOB>? It is good.")),
    )
    result = evaluate(env, tmp_path, str(log_file), "--json")
    assert result.returncode == 0, result.stderr
    score = results(result)["cases"][1]["results"][0]["scores"][0]
    assert (score["valid"], score["same_kind"], score["passed"]) == (True, True, False)
    assert score["checks"] == {
        "language_kept": False,
        "people_kept": True,
        "links_kept": False,
        "length_ratio": 0.72,
    }


def test_all_takes_the_filters(env, model, store_url, tmp_path):
    others = [
        ThreadKey("T0OTHER", "C0EVAL", "1800000000.000300"),
        ThreadKey("T0EVAL", "C0ELSE", "1800000000.000400"),
    ]
    store = open_store(store_url)
    try:
        store_thread(store)
        for key in others:
            store.append(key, "You are Aya.", "2025-04-04T12:30:00Z")
            store.append(key, UserContent(userid="<@U0ASKER>", text="Oi?"), "2025-04-04T12:31:00Z")
            store.append(key, FinishRequest(reasoning="Nothing to say"), "2025-04-04T12:32:00Z")
    finally:
        store.close()
    backdate(store_url, others[1], moment(datetime.now(UTC) - timedelta(days=10)))
    env = {**env, "DATABASE_URL": store_url}
    model.default = replies.finish_request()

    def listed(*filters: str) -> list[str]:
        result = evaluate(env, tmp_path, "--all", *filters, "--json")
        assert result.returncode == 0, result.stderr
        return [case["case"].split("@")[0] for case in results(result)["cases"]]

    # Oldest update first; a thread once per decision.
    assert listed() == [str(others[1]), str(THREAD), str(THREAD), str(others[0])]
    assert listed("--team", "T0EVAL") == [str(others[1]), str(THREAD), str(THREAD)]
    assert listed("--channel", "C0EVAL", "--team", "T0OTHER") == [str(others[0])]
    assert listed("--since", "2d") == [str(THREAD), str(THREAD), str(others[0])]
    assert listed("--until", "2d") == [str(others[1])]


def test_a_channel_s_own_model_is_asked_unless_a_model_is_named(env, model, store_url, tmp_path):
    """As a run in the channel would ask it; a saved set keeps it."""
    store = open_store(store_url)
    try:
        store_thread(store)
        own = ChannelConfig(team=THREAD.team, channel=THREAD.channel, model="gpt-channel")
        store.set_channel_config(own)
    finally:
        store.close()
    env = {**env, "DATABASE_URL": store_url}
    saved = evaluate(env, tmp_path, str(THREAD), "--save", str(tmp_path / "set"))
    assert saved.returncode == 0, saved.stderr
    runs = [(str(THREAD),), (str(tmp_path / "set"),), (str(THREAD), "--model", "gpt-named")]
    for args in runs:
        model.script(replies.tool_calls(history_call()), replies.tool_calls(post_call()))
        result = evaluate(env, tmp_path, *args, "--json")
        assert result.returncode == 0, result.stderr
        channel_models = results(result)["configs"][0]["channel_models"]
        assert channel_models is ("--model" not in args)
    assert [r["model"] for r in model.requests] == ["gpt-channel"] * 4 + ["gpt-named"] * 2


def test_the_instructions_file_counts_in_the_context_budget(env, model, log_file, tmp_path):
    (tmp_path / "long.txt").write_text("Call a tool, then another. " * 2_000, encoding="utf-8")
    env = {**env, "ASSISTANT_CONTEXT_TOKENS": "8000", "ASSISTANT_ANSWER_TOKENS": "100"}
    result = evaluate(env, tmp_path, str(log_file), "--instructions-file", "long.txt", "--json")
    assert result.returncode == 1, result.stderr
    assert model.requests == []  # no prompt over the window is sent
    scores = [case["results"][0]["scores"][0] for case in results(result)["cases"]]
    assert [score["kind"] for score in scores] == ["error", "error"]
    assert all("leaves the log nothing" in score["problems"][0] for score in scores)
    estimate = next(line for line in result.stderr.splitlines() if "estimate" in line)
    prompt = int(estimate.split("about ")[1].split(" prompt")[0].replace(",", ""))
    assert prompt > 2 * 10_000  # the instructions' tokens, in each of the two calls


def test_many_cases_at_once_come_out_in_their_order(model, env, tmp_path):
    """Results are spooled as cases end (in any order) and shown in the cases' order."""
    model.default = replies.tool_calls(history_call())
    logs = tmp_path / "logs"
    logs.mkdir()
    for number in range(6):
        (logs / f"{number}.json").write_text(log_json(), encoding="utf-8")
    args = ("--concurrency", "5", "--trials", "2", "--json", "--report", "eval.md", "--yes")
    result = run_assistant("eval", str(logs), *args, env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    expected = [f"{logs / f'{n}.json'}@{at}" for n in range(6) for at in (2, 4)]
    document = results(result)
    assert [case["case"] for case in document["cases"]] == expected
    assert document["summary"][0]["cases"] == 12 and len(model.requests) == 24
    report = (tmp_path / "eval.md").read_text(encoding="utf-8")
    headings = [line for line in report.splitlines() if line.startswith("### ")]
    assert headings == [f"### {n}. {case}" for n, case in enumerate(expected, 1)]


def test_a_judge_that_fails_is_an_error_after_the_client_s_retries(env, model, log_file, tmp_path):
    """The judge is asked through the model client (its attempts, its deadline): a server
    error is retried as OPENAI_MAX_RETRIES says, then fails the trial, exit status 1."""
    with FakeOpenAI() as judge:
        judge.script(replies.error(500), replies.error(500))
        model.script(replies.tool_calls(history_call()), replies.tool_calls(post_call("Pizza!")))
        args = ("--judge", "gpt-judge", "--judge-base-url", judge.base_url, "--json")
        result = evaluate({**env, "OPENAI_MAX_RETRIES": "1"}, tmp_path, str(log_file), *args)
        asked = judge.requests
    assert result.returncode == 1, result.stderr
    score = results(result)["cases"][1]["results"][0]["scores"][0]
    assert (score["passed"], score["verdict"]) == (False, None)
    assert score["problems"][-1].startswith("the judge could not be asked: ")
    assert len(asked) == 2  # the first attempt and one retry
    assert asked[0]["temperature"] == 0 and asked[0]["response_format"] == {"type": "json_object"}
    assert "tools" not in asked[0]


def test_the_server_is_probed_before_the_first_case_and_the_report_says_the_mode(
    env, model, log_file, tmp_path
):
    """Issue 49: against a server that ignores tool_choice no trial goes out with tools
    (scored "plain text" for the server's doing): the probe before the first case finds it,
    as `serve`'s check does at start, and every case is asked as JSON; the report says so."""
    model.server.kind, model.server.tool_choice = "llama.cpp", "ignored"
    model.script(
        replies.finish_request(),  # the probe's answer: plain text, as the server ignores it
        replies.tool_calls(history_call()),
        replies.tool_calls(post_call()),
    )
    report = tmp_path / "eval.md"
    env = {**env, "ASSISTANT_MODEL_CHECK": "on"}
    result = evaluate(env, tmp_path, str(log_file), "--json", "--report", str(report))
    assert result.returncode == 0, result.stderr
    probe, *cases = model.requests
    assert probe["tool_choice"] == "required" and len(cases) == 2
    assert all("response_format" in case and "tools" not in case for case in cases)
    document = results(result)
    assert document["summary"][0]["pass@1"] == 1.0
    assert document["configs"][0]["tool_mode"] == "json"
    assert "tool calls asked as JSON (the constrained mode" in report.read_text(encoding="utf-8")
    assert result.stderr.splitlines()[-1].endswith("0 errors, tool calls asked as JSON")
