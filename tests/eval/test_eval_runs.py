"""Saved eval runs (`eval --save-run`), scored again (`eval rescore`) and compared (`eval
diff`), and a run's limits (`--trials-beat`, `--max-tokens`, `--max-cost`): in process
(tests/cli.py) against the fake model over HTTP."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from assistant.fakes import ids
from assistant.fakes.openai import responses as replies
from assistant.fakes.openai.server import FakeOpenAI
from context.storage import open_store
from tests.cli import ROOT, invoke
from tests.eval.logs import POST, QUESTION, THREAD, history_call, log_json, post_call, store_thread
from tests.process import clean_env

USAGE = {"prompt_tokens": 1_000, "completion_tokens": 100, "total_tokens": 1_100}
KEY = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"


@pytest.fixture
def env(model):
    return clean_env(
        OPENAI_API_KEY=ids.OPENAI_API_KEY, OPENAI_BASE_URL=model.base_url, OPENAI_MAX_RETRIES="0"
    )


@pytest.fixture
def log_file(tmp_path):
    path = tmp_path / "lunch.json"
    path.write_text(log_json(), encoding="utf-8")
    return path


class Ran:
    def __init__(self, code: int, stdout: str, stderr: str) -> None:
        self.returncode, self.stdout, self.stderr = code, stdout, stderr

    def json(self) -> dict:
        return json.loads(self.stdout)


def assistant(env, tmp_path, *args: str) -> Ran:
    """`assistant eval ARGS`; a run asks a case at a time, so scripted answers keep their order."""
    if args and args[0] not in ("rescore", "diff") and "--concurrency" not in args:
        args = (*args, "--concurrency", "1")
    done = invoke(("eval", *args), env=env, cwd=tmp_path)
    ran = Ran(done.returncode, done.stdout.decode(), done.stderr.decode())
    assert "Traceback" not in ran.stderr
    return ran


def agree(model: FakeOpenAI, text: str = POST, times: int = 1) -> None:
    for _ in range(times):
        model.script(
            replies.tool_calls(history_call(), usage=USAGE),
            replies.tool_calls(post_call(text), usage=USAGE),
        )


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_saved_run_keeps_every_trial_and_is_scored_again_without_the_model(
    env, model, log_file, tmp_path
):
    model.script(
        replies.tool_calls(history_call(), usage=USAGE),
        replies.tool_calls(history_call(), usage=USAGE),
        replies.tool_calls(("finishRequest", {"reasoning": "no"}), usage=USAGE),
        replies.tool_calls(post_call(), usage=USAGE),
    )
    args = ("--trials", "2", "--save-run", "run", "--json")
    ran = assistant(env, tmp_path, str(log_file), *args)
    assert ran.returncode == 0, ran.stderr
    assert "eval: the run is saved in run" in ran.stderr
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["format"] == "assistant-eval-run" and manifest["trials"] == 2
    assert manifest["configs"][0]["summary"] == ran.json()["summary"][0]
    saved = lines(tmp_path / "run" / "results-1.jsonl")
    assert [case["id"] for case in saved] == [f"{log_file}@2", f"{log_file}@4"]
    assert [len(case["answers"]) for case in saved] == [2, 2]
    assert saved[0]["answers"][0]["calls"][0]["call"]["toolCall"] == "getThreadHistory"
    assert saved[0]["answers"][0]["prompt_tokens"] == 1_000
    asked = len(model.requests)

    again = assistant(env | {"OPENAI_API_KEY": ""}, tmp_path, "rescore", "run", "--json")
    assert again.returncode == 0, again.stderr
    assert len(model.requests) == asked  # no model asked, no key needed
    assert again.json()["summary"] == ran.json()["summary"]
    assert again.json()["cases"] == ran.json()["cases"]
    # A stricter threshold is a new exit status, from the same answers.
    strict = assistant(env, tmp_path, "rescore", "run", "--min-pass", "1")
    assert strict.returncode == 1
    assert "pass^2 0.50 is below --min-pass 1" in strict.stderr


def test_rescore_with_a_judge_asks_only_the_judge_and_saves_the_run_scored_again(
    env, model, log_file, tmp_path
):
    agree(model, "Pizza!")
    assert assistant(env, tmp_path, str(log_file), "--save-run", "run").returncode == 0
    asked = len(model.requests)
    with FakeOpenAI() as judge:
        judge.script(replies.text('{"verdict": "worse", "reason": "Pizza is not what was asked"}'))
        args = ("--judge", "gpt-judge", "--judge-base-url", judge.base_url)
        ran = assistant(env, tmp_path, "rescore", "run", *args, "--save-run", "judged", "--json")
        assert ran.returncode == 0, ran.stderr
        assert json.loads(judge.requests[0]["messages"][1]["content"]) == {
            "question": QUESTION,
            "REFERENCE": POST,
            "CANDIDATE": "Pizza!",
        }
    assert len(model.requests) == asked
    scores = ran.json()["cases"][1]["results"][0]["scores"][0]
    assert (scores["verdict"], scores["passed"]) == ("worse", False)
    manifest = json.loads((tmp_path / "judged" / "manifest.json").read_text(encoding="utf-8"))
    assert (manifest["judge"], manifest["rescored_from"]) == ("gpt-judge", "run")
    # The run scored again is a run: diff sets it beside the first, the regression first.
    diff = assistant(env, tmp_path, "diff", "run", "judged", "--fail-on-regression")
    assert diff.returncode == 1
    assert diff.stdout.splitlines()[1].split() == [f"{log_file}@4", "1/1", "0/1", "regressed"]
    assert "eval diff: 1 cases regressed" in diff.stderr


def test_diff_sets_two_runs_side_by_side_worst_first(env, model, tmp_path):
    # Three logs: the second run regresses on the second, improves on the third.
    for name in ("a", "b", "c"):
        (tmp_path / "logs").mkdir(exist_ok=True)
        (tmp_path / "logs" / f"{name}.json").write_text(log_json(), encoding="utf-8")
    wrong = replies.tool_calls(("finishRequest", {"reasoning": "no"}))
    right = [replies.tool_calls(history_call()), replies.tool_calls(post_call())]
    model.script(*right, *right, wrong, wrong)
    assert assistant(env, tmp_path, "logs", "--save-run", "before").returncode == 0
    model.script(*right, right[0], wrong, *right)
    assert assistant(env, tmp_path, "logs", "--save-run", "after").returncode == 0

    ran = assistant(env, tmp_path, "diff", "before", "after", "--json", "--report", "diff.md")
    assert ran.returncode == 0, ran.stderr  # a regression fails only when asked to
    document = ran.json()
    assert document["counts"] == {
        "regressed": 1, "improved": 2, "unchanged": 3, "only in A": 0, "only in B": 0,
    }  # fmt: skip
    shown = [(Path(case["case"]).name, case["status"]) for case in document["cases"]]
    assert shown == [
        ("b.json@4", "regressed"),
        ("a.json@2", "unchanged"),
        ("a.json@4", "unchanged"),
        ("b.json@2", "unchanged"),
        ("c.json@2", "improved"),
        ("c.json@4", "improved"),
    ]
    assert document["cases"][0]["change"] == -1.0
    assert [run["run"] for run in document["runs"]] == ["before", "after"]
    report = (tmp_path / "diff.md").read_text(encoding="utf-8")
    assert "### 1. " in report and "b.json@4: regressed" in report
    assert "1 regressed, 2 improved, 3 unchanged" in report
    assert "Recorded:" in report and "finishRequest" in report
    table = assistant(env, tmp_path, "diff", "before", "after")
    assert table.stdout.splitlines()[0].split() == [
        "case", "feedback", "A", "gpt-4o-mini", "B", "gpt-4o-mini", "change",
    ]  # fmt: skip
    assert (
        assistant(env, tmp_path, "diff", "before", "after", "--fail-on-regression").returncode == 1
    )
    # A case only one run has is shown after the others, never matched to another.
    (tmp_path / "logs" / "c.json").unlink()
    model.script(*right, *right)
    assert assistant(env, tmp_path, "logs", "--save-run", "fewer").returncode == 0
    fewer = assistant(env, tmp_path, "diff", "before", "fewer", "--json").json()
    assert fewer["counts"]["only in A"] == 2
    assert [case["status"] for case in fewer["cases"][-2:]] == ["only in A", "only in A"]


def test_a_saved_run_holds_no_key_and_still_scores_the_same(env, model, tmp_path):
    log = json.loads(log_json())
    log[1]["content"]["text"] += f" My key is {KEY}."
    (tmp_path / "leaky.json").write_text(json.dumps(log), encoding="utf-8")
    model.script(
        replies.tool_calls(history_call(f"Reading, not using {KEY}")),
        replies.tool_calls(post_call()),
    )
    ran = assistant(env, tmp_path, "leaky.json", "--save-run", "run", "--json")
    assert ran.returncode == 0, ran.stderr
    for path in (tmp_path / "run").rglob("*"):
        if path.is_file():
            assert KEY not in path.read_text(encoding="utf-8"), path
    assert "[SECRET-1]" in (tmp_path / "run" / "results-1.jsonl").read_text(encoding="utf-8")
    again = assistant(env, tmp_path, "rescore", "run", "--json")
    assert again.returncode == 0, again.stderr
    assert again.json()["summary"] == ran.json()["summary"]


def test_a_case_people_gave_a_thumbs_down_gets_its_own_trial_count(env, model, store_url, tmp_path):
    store = open_store(store_url)
    try:
        store_thread(store, vote="bad")
    finally:
        store.close()
    env = {**env, "DATABASE_URL": store_url}
    model.default = replies.tool_calls(history_call())
    ran = assistant(env, tmp_path, str(THREAD), "--trials-beat", "3", "--json", "--save-run", "run")
    assert ran.returncode == 0, ran.stderr
    trials = [(c["results"][0]["feedback"], c["results"][0]["trials"]) for c in ran.json()["cases"]]
    assert trials == [(None, 1), ("beat", 3)]
    assert len(model.requests) == 4
    assert "eval: estimate: 2 cases, 4 model calls" in ran.stderr  # counted before it ran
    again = assistant(env, tmp_path, "rescore", "run", "--json")
    assert again.returncode == 0, again.stderr
    assert [c["results"][0]["trials"] for c in again.json()["cases"]] == [1, 3]


def test_max_tokens_ends_the_run_cleanly_with_the_cases_it_finished(env, model, tmp_path):
    (tmp_path / "logs").mkdir()
    for name in ("a", "b", "c"):
        (tmp_path / "logs" / f"{name}.json").write_text(log_json(), encoding="utf-8")
    model.default = replies.tool_calls(history_call(), usage=USAGE)
    # 1,100 tokens a trial, 2 trials a case: after the third trial 3,300 are used, over
    # 3,000; the second case, begun, is cut short and left out.
    args = ("logs", "--trials", "2", "--max-tokens", "3000", "--json")
    args += ("--save-run", "run")
    ran = assistant(env, tmp_path, *args)
    assert ran.returncode == 0, ran.stderr
    assert len(model.requests) == 3
    summary = ran.json()["summary"][0]
    assert summary["cases"] == 1 and len(ran.json()["cases"]) == 1
    assert summary["stopped"] == "--max-tokens 3000 reached (3,300 tokens used)"
    assert "eval gpt-4o-mini: stopped after 1 cases: --max-tokens 3000 reached" in ran.stderr
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["stopped"] == summary["stopped"]
    assert len(lines(tmp_path / "run" / "results-1.jsonl")) == 1
    # The run stopped early is scored again on the cases it has.
    again = assistant(env, tmp_path, "rescore", "run", "--json")
    assert again.returncode == 0, again.stderr
    assert again.json()["summary"][0]["cases"] == 1
    # A limit the run never reaches cuts nothing.
    whole = assistant(env, tmp_path, "logs", "--max-tokens", "1000000", "--json")
    assert "stopped" not in whole.json()["summary"][0] and whole.json()["summary"][0]["cases"] == 6


def test_max_cost_is_priced_by_the_table_and_needs_a_price(env, model, log_file, tmp_path):
    # $1 a million prompt tokens, $10 a million answer tokens: $0.002 a trial.
    env = env | {"ASSISTANT_PRICES": json.dumps({"gpt-4o-mini": {"input": 1, "output": 10}})}
    model.default = replies.tool_calls(history_call(), usage=USAGE)
    ran = assistant(env, tmp_path, str(log_file), "--max-cost", "0.001", "--json")
    assert ran.returncode == 0, ran.stderr
    assert ran.json()["summary"][0]["stopped"] == "--max-cost 0.001 reached ($0.0020 spent)"
    assert len(model.requests) == 1
    unpriced = assistant(env, tmp_path, str(log_file), "--model", "gpt-x", "--max-cost", "1")
    assert unpriced.returncode == 2
    assert "--max-cost: no price for gpt-x in ASSISTANT_PRICES" in unpriced.stderr
    assert len(model.requests) == 1


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("rescore", "nowhere"), "nowhere/manifest.json"),
        (("diff", "nowhere", "nowhere"), "nowhere/manifest.json"),
        (("lunch.json", "--save-run", "full"), "full: exists and is not an empty directory"),
        (("lunch.json", "--save-run", "x", "--save", "y"), "--save writes a set and runs nothing"),
        (("lunch.json", "--against", "gpt-x", "--max-tokens", "9"), "stop one configuration's"),
        (("lunch.json", "--max-cost", "0"), "must be a number of dollars over 0"),
        (("rescore", "run", "--demo-model"), "--demo-model is the judge's server"),
    ],
)
def test_bad_input_is_exit_status_2(env, log_file, tmp_path, args, said):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x", encoding="utf-8")
    ran = assistant(env, tmp_path, *args)
    assert ran.returncode == 2
    assert said in ran.stderr


def test_a_tampered_run_is_refused_naming_the_file_and_line(env, model, log_file, tmp_path):
    agree(model)
    assert assistant(env, tmp_path, str(log_file), "--save-run", "run").returncode == 0
    results = tmp_path / "run" / "results-1.jsonl"
    saved = lines(results)
    saved[1]["answers"][0]["calls"][0] = {"call": {"toolCall": "rm -rf"}}
    results.write_text("\n".join(json.dumps(line) for line in saved) + "\n", encoding="utf-8")
    ran = assistant(env, tmp_path, "rescore", "run")
    assert ran.returncode == 2
    assert "run/results-1.jsonl, line 2: not a tool call" in ran.stderr
    saved[1]["trials"][0]["passed"] = "yes"
    results.write_text("\n".join(json.dumps(line) for line in saved) + "\n", encoding="utf-8")
    ran = assistant(env, tmp_path, "diff", "run", "run")
    assert ran.returncode == 2
    assert "run/results-1.jsonl, line 2: not a case's results" in ran.stderr


def documented_workflow() -> list[list[str]]:
    """The commands of docs/evaluation.md, "Before a model change"."""
    text = (ROOT / "docs" / "evaluation.md").read_text(encoding="utf-8")
    section = text[text.index("### Before a model change") :]
    block = section[section.index("```sh\n") + 6 : section.index("\n```", section.index("```sh"))]
    return [shlex.split(line) for line in block.splitlines()]


def test_the_workflow_before_a_model_change_runs_on_the_demo_thread(tmp_path):
    commands = documented_workflow()
    assert [words[:2] for words in commands] == [["assistant", "demo"]] + [
        ["assistant", "eval"]
    ] * 4
    env = clean_env()
    played = invoke(("demo", "--database", str(tmp_path / "demo.db")), env=env, cwd=tmp_path)
    assert played.returncode == 0, played.stderr
    env = clean_env(DATABASE_URL=f"sqlite:///{tmp_path / 'demo.db'}")
    for words in commands[1:]:
        ran = assistant(env, tmp_path, *words[2:])
        assert ran.returncode == 0, (words, ran.stderr)
    diff = (tmp_path / "diff.md").read_text(encoding="utf-8")
    assert "0 regressed, 0 improved, 6 unchanged" in diff
    judged = json.loads((tmp_path / "runs" / "judged" / "manifest.json").read_text("utf-8"))
    assert (judged["trials"], judged["judge"]) == (3, "demo-model")
    assert judged["configs"][0]["model"] == "demo-model"
    shown = "".join(p.read_text("utf-8") for p in (tmp_path / "runs").rglob("*") if p.is_file())
    assert "gpt-" not in shown + diff  # the demo's model never named as a real one


def test_a_compared_run_keeps_both_configurations(env, model, log_file, tmp_path):
    agree(model)
    model.script(*[replies.tool_calls(("finishRequest", {"reasoning": "no"}))] * 2)
    args = ("--against", "gpt-x", "--save-run", "run", "--json")
    ran = assistant(env, tmp_path, str(log_file), *args)
    assert ran.returncode == 0, ran.stderr
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text(encoding="utf-8"))
    assert [(c["model"], c["results"]) for c in manifest["configs"]] == [
        ("gpt-4o-mini", "results-1.jsonl"),
        ("gpt-x", "results-2.jsonl"),
    ]
    again = assistant(env, tmp_path, "rescore", "run", "--json")
    assert again.returncode == 0, again.stderr
    assert again.json()["summary"] == ran.json()["summary"]
    assert [c["winner"] for c in again.json()["cases"]] == ["gpt-4o-mini", "gpt-4o-mini"]
    # diff takes each run's first configuration.
    diff = assistant(env, tmp_path, "diff", "run", "run", "--json").json()
    assert diff["counts"]["unchanged"] == 2
    assert [run["config"]["model"] for run in diff["runs"]] == ["gpt-4o-mini", "gpt-4o-mini"]
