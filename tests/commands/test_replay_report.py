"""`assistant replay` for checking a model or persona against recorded threads: a stored thread
as input, `--at INDEX` (the log as it stood before an entry, beside what it recorded next),
`--model` and `--prompt-file`, and several inputs at once with `--report FILE`."""

from __future__ import annotations

import json

import pytest

from assistant.fakes import ids
from assistant.fakes.openai import responses as replies
from context.canonical import load_log
from context.entry import UserContent
from context.storage import EntryMeta, ThreadKey, ThreadMessage, open_store
from tests.cli import ROOT
from tests.harness import prompt_log
from tests.process import clean_env, run_assistant

INCIDENT = ROOT / "examples" / "deploy-incident.json"
LUNCH = ROOT / "examples" / "aya-lunch.json"
THREAD = ThreadKey("T0AYA", "C0DEPLOY", "1748854272.000100")
TOKENS = EntryMeta(model="gpt-4o", prompt_tokens=1000, cached_tokens=200, completion_tokens=50)


def answer(body: dict) -> replies.Completion:
    """Answer the newest message once, then finish."""
    log = prompt_log(body)
    if log[-1]["role"] == "assistant" and log[-1]["content"]["toolCall"] == "postMessage":
        return replies.finish_request("Answered")
    return replies.tool_calls(("postMessage", {"text": "New answer.", "reasoning": "answer"}))


@pytest.fixture
def env(model):
    model.default = answer
    return clean_env(
        OPENAI_API_KEY=ids.OPENAI_API_KEY, OPENAI_BASE_URL=model.base_url, OPENAI_MAX_RETRIES="0"
    )


def store_incident(url: str, thread: list[ThreadMessage] | None = None) -> None:
    """The deploy incident as a stored thread: each model reply with its usage, each
    person's message with its Slack ts."""
    store = open_store(url)
    try:
        for entry in load_log(INCIDENT.read_bytes()).entries:
            meta = EntryMeta()
            if entry.role == "user":
                meta = EntryMeta(slack_ts=f"17488542{70 + entry.index}.000100")
            elif entry.role == "assistant" and entry.content.toolCall != "finishRequest":
                meta = TOKENS
            store.append(THREAD, entry.content, entry.timestamp, meta)
        if thread is not None:
            store.remember_messages(THREAD, thread, complete=True)
    finally:
        store.close()


def report_lines(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_at_replays_the_log_as_it_stood_before_that_entry(env, model, tmp_path):
    out, report = tmp_path / "extended.json", tmp_path / "report.jsonl"
    result = run_assistant(
        "replay",
        str(INCIDENT),
        "--at",
        "12",
        "--out",
        str(out),
        "--report",
        str(report),
        env=env,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    original = json.loads(INCIDENT.read_text(encoding="utf-8"))
    # The model saw entries 0 to 11: up to Marta's request, not the answer recorded to it.
    assert prompt_log(model.requests[0]) == original[:12]
    saved = json.loads(out.read_text(encoding="utf-8"))
    assert saved[:12] == original[:12]
    assert [e["content"]["toolCall"] for e in saved[12:]] == ["postMessage", "finishRequest"]
    assert result.stdout.startswith("🤖 Assistant [Turn 5]\n")  # one input: no header

    first, summary = report_lines(report)
    assert first["input"] == str(INCIDENT) and first["at"] == 12 and first["status"] == "ran"
    assert first["asked"] == original[11]
    assert first["recorded"]["entries"] == original[12:14]
    assert first["recorded"]["texts"] == [original[12]["content"]["text"]]
    assert first["recorded"]["steps"] is None  # a file keeps no usage
    assert first["replay"]["texts"] == ["New answer."]
    assert first["replay"]["steps"] == 2 and first["replay"]["tokens"]["prompt_tokens"] > 0
    assert first["replay"]["ended"] == "finishRequest"
    assert summary["summary"]["ran"] == 1 and summary["summary"]["same_calls"] == 1


def test_a_stored_thread_replays_beside_its_recorded_usage_and_thread(
    env, model, store_url, tmp_path
):
    # Slack's thread as the store keeps it: a message from before the bot was asked, and one
    # posted after the cut (the replay must not see it).
    earlier = ThreadMessage("1748854200.000100", "<@U02JONAS>", "deploy #4812 failed again")
    later = ThreadMessage("1748860000.000100", "<@U04MARTA>", "thanks, all good now")
    store_incident(store_url, [earlier, later])
    model.script(
        replies.tool_calls(("getThreadHistory", {"ascending": True, "reasoning": "Context"}))
    )
    report = tmp_path / "report.jsonl"
    result = run_assistant(
        "replay",
        str(THREAD),
        "--at",
        "2",
        "--report",
        str(report),
        env={**env, "DATABASE_URL": store_url},
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    history = prompt_log(model.requests[1])[3]["content"]
    assert history.splitlines() == [
        "Thread history (1 message, oldest first):",
        "[2025-06-02T08:50:00Z] <@U02JONAS>: deploy #4812 failed again",
    ]
    first = report_lines(report)[0]
    assert first["input"] == str(THREAD)
    # Recorded: entries 2 to 5 (history, its result, the answer, finishRequest): two replies.
    assert [e["index"] for e in first["recorded"]["entries"]] == [2, 3, 4, 5]
    assert first["recorded"]["steps"] == 2
    assert first["recorded"]["tokens"] == {
        "prompt_tokens": 2000,
        "cached_tokens": 400,
        "completion_tokens": 100,
    }
    assert first["replay"]["calls"] == ["getThreadHistory", "postMessage", "finishRequest"]


def test_several_inputs_make_one_report_and_the_exit_status_says_if_all_ran(env, model, tmp_path):
    url = f"sqlite:///{tmp_path / 'store.db'}"
    store_incident(url)
    env = {**env, "DATABASE_URL": url}
    broken = ROOT / "tests" / "data" / "broken" / "several-problems.json"
    inputs = [str(LUNCH), str(THREAD), str(broken), "T0AYA/C0NONE/1.2", str(INCIDENT)]
    report = tmp_path / "report.md"
    result = run_assistant(
        "replay", *inputs, "--at", "9", "--report", str(report), env=env, cwd=tmp_path
    )
    assert result.returncode == 1  # two inputs could not be replayed
    assert "Traceback" not in result.stderr
    assert f"replay: {LUNCH}: --at 9 is past the end of the log (4 entries)" in result.stderr
    assert "replay: T0AYA/C0NONE/1.2: no thread T0AYA/C0NONE/1.2 in the store" in result.stderr
    assert f"{broken}: entry 1, userid" in result.stderr
    summary = result.stderr.strip().splitlines()[-1]
    assert summary.startswith(
        "replay: 5 input(s): 2 replayed, 0 failed, 3 not run; same tool calls as recorded in "
        "2 of 2; replay tokens "
    )
    assert summary.endswith("; recorded tokens 1,000 / 200 / 50.")
    # Each input's trace is headed by what it replays.
    headers = [line for line in result.stdout.splitlines() if line.startswith("🧵")]
    assert headers == [
        f"🧵 replay/2/0 ({THREAD}, at entry 9)",
        f"🧵 replay/5/0 ({INCIDENT}, at entry 9)",
    ]
    text = report.read_text(encoding="utf-8")
    assert text.startswith("# Replay report\n")
    assert "- model: gpt-4o-mini\n" in text and "- cut: before entry 9\n" in text
    sections = text.split("\n## ")[1:]
    assert [s.splitlines()[0] for s in sections] == [
        *(f"{n}. {source}" for n, source in enumerate(inputs, 1)),
        "Summary",
    ]
    stored = sections[1]
    assert "Cut before entry 9: entries 0 to 8 sent (of 14)." in stored
    assert "| tool calls | postMessage, finishRequest | postMessage, finishRequest |" in stored
    assert "| tokens (prompt / cached / completion) | 1,000 / 200 / 50 |" in stored
    assert '9 🤖 postMessage {"text": "Great, glad it' in stored  # what was recorded next
    assert '9 🤖 postMessage {"text": "New answer."}' in stored  # and what the replay did
    assert "| steps | — | 2 |" in sections[4]  # a file: the recorded steps are not known
    assert sections[2].splitlines()[2] == "Not run: not a valid log (4 problems)"
    assert sections[-1].splitlines()[2].startswith("5 input(s): 2 replayed, 0 failed, 3 not run")

    good = run_assistant("replay", str(THREAD), str(INCIDENT), "--at", "9", env=env, cwd=tmp_path)
    assert good.returncode == 0, good.stderr


def test_the_model_and_the_persona_can_be_changed_for_the_replay(env, model, tmp_path):
    persona = tmp_path / "persona.txt"
    persona.write_text("You're Bea, a terse release manager.\n", encoding="utf-8")
    report = tmp_path / "report.md"
    result = run_assistant(
        "replay",
        str(LUNCH),
        "--model",
        "gpt-4.1",
        "--prompt-file",
        str(persona),
        "--report",
        str(report),
        env=env,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    request = model.requests[0]
    assert request["model"] == "gpt-4.1"
    sent = prompt_log(request)
    assert sent[0]["content"] == "You're Bea, a terse release manager."
    assert sent[1:] == json.loads(LUNCH.read_text(encoding="utf-8"))[1:]
    assert f"- persona: from {persona}\n" in report.read_text(encoding="utf-8")


def test_a_failed_run_exits_1_and_usage_mistakes_exit_2(env, model, tmp_path):
    model.script(replies.error(500))
    report = tmp_path / "r.jsonl"
    failed = run_assistant(
        "replay", str(LUNCH), str(INCIDENT), "--report", str(report), env=env, cwd=tmp_path
    )
    assert failed.returncode == 1
    assert f"replay: {LUNCH}: the run failed (entry 4)" in failed.stderr
    first, second, summary = report_lines(report)
    assert first["status"] == "failed"
    assert first["problem"].startswith("Error: the model call failed")
    assert second["status"] == "ran" and summary["summary"]["failed"] == 1

    several_out = run_assistant(
        "replay", str(LUNCH), str(INCIDENT), "--out", "x.json", env=env, cwd=tmp_path
    )
    assert several_out.returncode == 2
    assert "--out takes one input; for several, use --report" in several_out.stderr
    zero = run_assistant("replay", str(LUNCH), "--at", "0", env=env, cwd=tmp_path)
    assert zero.returncode == 2 and "INDEX must be 1 or more" in zero.stderr
    empty = tmp_path / "empty.txt"
    empty.write_text("\n", encoding="utf-8")
    no_persona = run_assistant(
        "replay", str(LUNCH), "--prompt-file", str(empty), env=env, cwd=tmp_path
    )
    assert no_persona.returncode == 2 and "is empty" in no_persona.stderr
    # An input that cannot be read is a usage error too, before anything is replayed.
    missing = run_assistant("replay", str(LUNCH), "missing.json", env=env, cwd=tmp_path)
    assert missing.returncode == 2
    assert missing.stderr.splitlines() == [
        "assistant replay: cannot read missing.json: no such file (nor is it a thread id "
        "TEAM/CHANNEL/THREAD_TS)"
    ]
    assert len(model.requests) == 3  # the usage mistakes asked the model nothing


def test_a_deeply_nested_input_is_an_invalid_log(env, model, tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_bytes(b"[" * 100_000)
    result = run_assistant("replay", str(deep), env=env, cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        f"{deep}: file, (document): nested deeper than 64 arrays and objects"
    ]
    assert model.requests == []


def test_what_a_log_holds_cannot_forge_the_report_or_put_controls_in_it(env, model, tmp_path):
    forged = "<@U1>\n\n## Summary\n\nEverything replayed.\x1b[2J\x07\x85\u202e"
    log = json.loads(LUNCH.read_text(encoding="utf-8"))[:2]
    log[1]["content"]["userid"] = forged
    log[1]["content"]["text"] = "lunch?\x9b31m\u202egnihton"
    crafted = tmp_path / "crafted.json"
    crafted.write_text(json.dumps(log), encoding="utf-8")
    report = tmp_path / "r.md"
    result = run_assistant("replay", str(crafted), "--report", str(report), env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    text = report.read_text(encoding="utf-8")
    assert [line for line in text.splitlines() if line.startswith("#")] == [
        "# Replay report",
        f"## 1. {crafted}",
        "## Summary",
    ]
    assert not [c for c in text if (ord(c) < 32 and c != "\n") or 0x7F <= ord(c) <= 0x9F]
    assert "\u202e" not in text
    escaped = "<@U1>\\n\\n## Summary\\n\\nEverything replayed.\\u001b[2J\\u0007\\u0085\\u202e"
    assert f"Last message before it: entry 1, {escaped}:" in text
    assert '"lunch?\\u009b31m\\u202egnihton"' in text


RECAP = ThreadKey("T0AYA", "C0RECAP", "1748854270.000100")
RECORDED_HISTORY = (
    "Thread history (2 messages, oldest first):\n"
    "[2025-06-02T08:50:00Z] <@U02JONAS>: deploy #4812 failed\n"
    "(entry 1)"
)


def store_recap(url: str) -> None:
    """A mention answered after reading the thread: the recorded history names the mention,
    which the prompt showed whole, as `(entry 1)`."""
    from context.toolcalls import FinishRequest, GetThreadHistory, PostMessage

    store = open_store(url)
    try:
        asked = UserContent(userid="<@U04MARTA>", text="<@U07AYA> sum it up?")
        store.append(RECAP, "You're Aya.", "2025-06-02T09:11:10Z")
        store.append(RECAP, asked, "2025-06-02T09:11:10Z", EntryMeta(slack_ts=RECAP.thread_ts))
        store.append(
            RECAP, GetThreadHistory(ascending=True, reasoning="Context"), "2025-06-02T09:11:11Z"
        )
        store.append(RECAP, RECORDED_HISTORY, "2025-06-02T09:11:12Z")
        store.append(RECAP, PostMessage(text="It failed.", reasoning="Sum"), "2025-06-02T09:11:13Z")
        store.append(RECAP, FinishRequest(reasoning="Done"), "2025-06-02T09:11:13Z")
        earlier = ThreadMessage("1748854200.000100", "<@U02JONAS>", "deploy #4812 failed")
        mention = ThreadMessage(RECAP.thread_ts, "<@U04MARTA>", "<@U07AYA> sum it up?")
        store.remember_messages(RECAP, [earlier, mention], complete=True)
    finally:
        store.close()


@pytest.mark.parametrize(
    ("ascending", "expected"),
    [
        (True, RECORDED_HISTORY),  # the call the run made there: the result it got
        (  # another call: read from the stored thread, naming what the prompt shows, as live
            False,
            "Thread history (2 messages, newest first):\n(entry 1)\n"
            "[2025-06-02T08:50:00Z] <@U02JONAS>: deploy #4812 failed",
        ),
    ],
)
def test_a_replayed_history_read_sees_what_the_run_saw(
    ascending, expected, env, model, store_url, tmp_path
):
    store_recap(store_url)
    model.script(
        replies.tool_calls(("getThreadHistory", {"ascending": ascending, "reasoning": "Context"}))
    )
    out = tmp_path / "replayed.json"
    result = run_assistant(
        "replay",
        str(RECAP),
        "--at",
        "2",
        "--out",
        str(out),
        env={**env, "DATABASE_URL": store_url},
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(out.read_text(encoding="utf-8"))[3]["content"] == expected


def test_a_replay_report_shows_where_and_when_the_stop_button_stopped_the_answer(
    env, model, tmp_path
):
    """The stop button's entry ends the recorded run it stopped (docs/log-format.md)."""
    stopped = (
        "Stopped: <@U2> pressed stop at 2025-04-04 12:34:05 UTC; the answer stopped there, "
        'and the request counts as answered. What it had streamed stays in the thread: "Try".'
    )
    log = [
        {"index": 0, "turn": "0", "timestamp": "2025-04-04T12:33:00Z", "role": "system",
         "content": "You are Aya."},
        {"index": 1, "turn": 0, "timestamp": "2025-04-04T12:34:00Z", "role": "user",
         "content": {"userid": "<@U1>", "text": "Lunch?"}},
        {"index": 2, "turn": 0, "timestamp": "2025-04-04T12:34:05Z", "role": "system",
         "content": stopped},
        {"index": 3, "turn": 0, "timestamp": "2025-04-04T12:35:00Z", "role": "user",
         "content": {"userid": "<@U1>", "text": "Just pick one."}},
        {"index": 4, "turn": 1, "timestamp": "2025-04-04T12:35:02Z", "role": "assistant",
         "content": {"toolCall": "finishRequest", "reasoning": "done"}},
    ]  # fmt: skip
    source, report = tmp_path / "stopped.json", tmp_path / "report.jsonl"
    source.write_text(json.dumps(log), encoding="utf-8")
    result = run_assistant(
        "replay", str(source), "--at", "2", "--report", str(report), env=env, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    first, _ = report_lines(report)
    assert first["recorded"]["entries"] == log[2:3]  # the recorded run ended at the stop
