"""`assistant demo --model-url` against llama.cpp's `llama-server` and SmolLM2-135M-Instruct,
with the settings docs/model-servers.md gives a model on a CPU and the README puts beside the
command (issue 49): both questions answered by a post of the model, no attempt cut by the
timeout, and every request in the constrained mode telling the model what each tool does,
the demo's MCP tool among them (the request is seen through a proxy: the log cannot show it)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from assistant.model.attempts import DID_NOT_ANSWER
from context.storage import ThreadKey, open_store
from tests.process import ROOT, clean_env, run_assistant
from tests.real_model.conftest import LlamaServer, RecordingProxy
from tests.real_model.test_serve import STEPS, posts_to_show

pytestmark = [pytest.mark.real_model, pytest.mark.timeout(3600)]

# docs/model-servers.md#a-model-on-a-cpu, as the README writes them before the command.
CPU_SETTINGS = {"OPENAI_TIMEOUT": "300", "OPENAI_MAX_RETRIES": "1",
                "ASSISTANT_ANSWER_TOKENS": "512"}  # fmt: skip
TIMED_OUT = "did not come within OPENAI_TIMEOUT"  # the log's note of an attempt cut
DESCRIBED = (
    "- postMessage: Post a reply in the thread (Markdown, converted for Slack).",
    "- finishRequest: End the work on the current request, once everything needed is posted.",
    "- releases__checklist: What to check before shipping a release. Arguments: release (string)",
)


def ended(entry: dict[str, Any]) -> bool:
    """Whether the entry ends a run: finishRequest, or an end the thread was told of."""
    content = entry["content"]
    if entry["role"] == "assistant":
        return bool(content["toolCall"] == "finishRequest")
    return entry["role"] == "system" and "The user was told" in str(content)


def test_the_settings_are_the_documented_ones():
    shown = " ".join(f"{name}={value}" for name, value in CPU_SETTINGS.items())
    command = f"{shown} \\\n  assistant demo --model-url http://localhost:8080/v1 --model smollm2"
    assert command in (ROOT / "README.md").read_text(encoding="utf-8")
    assert command in (ROOT / "docs" / "model-servers.md").read_text(encoding="utf-8")


def test_the_demo_with_the_cpu_settings_answers_both_questions(
    llama_server: LlamaServer, tmp_path: Path
):
    env = clean_env(
        DATABASE_URL=f"sqlite:///{tmp_path / 'demo.db'}",
        ASSISTANT_STREAM="auto",  # the default, which the harness's environment turns off
        # The tier's time: a tiny model that posts the same text again and again would
        # take the 8 steps of an answer at several seconds each (as test_serve.py bounds it).
        ASSISTANT_MAX_STEPS=str(STEPS),
        **CPU_SETTINGS,
    )
    with RecordingProxy(llama_server) as proxy:
        args = ["--model-url", proxy.base_url, "--model", "smollm2"]
        result = run_assistant("demo", *args, env=env, cwd=tmp_path)
        requests = list(proxy.requests)
    told = f"{result.stdout}\n{result.stderr}"
    assert result.returncode == 0, told
    assert "Traceback" not in result.stderr
    # The start's check found that llama-server leaves tool_choice unenforced for SmolLM2.
    assert "asked as JSON from now on" in result.stderr, told
    thread = re.search(r"answers in thread (\S+),", result.stderr)
    assert thread is not None, told
    store = open_store(env["DATABASE_URL"])
    try:
        log = [e.as_dict() for e in store.entries(ThreadKey.parse(thread[1]))]
    finally:
        store.close()
    shown = json.dumps(log, indent=1)
    # Both questions answered: two runs, each showing the person a post of the model (what
    # it says is SmolLM2-135M's: a run may end at the step cap after its post).
    ends = [e["index"] for e in log if ended(e)]
    assert len(ends) == 2, shown
    starts, posted = [0, ends[0] + 1], posts_to_show(log)
    for start, end in zip(starts, ends, strict=True):
        assert any(start <= index < end for index in posted), shown
    # No attempt cut by OPENAI_TIMEOUT, in the log or the process's log.
    assert TIMED_OUT not in shown and DID_NOT_ANSWER not in shown
    assert "OPENAI_TIMEOUT" not in result.stderr
    # Every step asked in the constrained mode, streamed, told what each tool does.
    steps = [
        r for r in requests if r.get("max_tokens") == int(CPU_SETTINGS["ASSISTANT_ANSWER_TOKENS"])
    ]
    assert steps and all("response_format" in r and r.get("stream") for r in steps), requests
    for request in steps:
        system = request["messages"][0]["content"]
        assert all(line in system for line in DESCRIBED), system
