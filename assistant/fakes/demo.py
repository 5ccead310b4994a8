"""The demo's conversation and its scripted model (`assistant demo`, `assistant replay
--demo-model`).

The conversation: two people discuss a release in a channel thread; one of them asks the bot
to sum it up (a mention: the model reads the thread's history first), then asks a follow-up
without mentioning it. The model is not a script of replies in order but a rule over the log
each request carries (the newest person's message and what was done since), so it answers
the same way live, in a replay of the whole log, or of the log cut at any entry. It also
judges (`assistant eval --demo-model --judge demo-model`), by a rule as plain: the same post
again is as good, any other worse; and live answers (ASSISTANT_JUDGE_SAMPLE): its own are
good, its word that a question is outside the script poor. Anything else it is asked gets a
plain-text answer that says what it is: never an error of its own.

It goes by `DEMO_MODEL`, the name the demo's settings give it, so that no log, report or
usage figure of a demo names a real model.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from assistant.fakes import ids
from assistant.fakes.openai.responses import Completion, finish_request, tool_calls
from assistant.fakes.openai.responses import text as plain_text

# The scripted model's name: what the demo's runs record, and what `replay` and `eval`
# `--demo-model` ask for and report.
DEMO_MODEL = "demo-model"
BOB_ID = "U0FAKEBOB1"
# The demo's MCP server's tool (`assistant.fakes.mcp_release`), as the model is offered it.
CHECKLIST_TOOL = "releases__checklist"
CHANNEL_NAME = "general"


@dataclass(frozen=True)
class Message:
    user: str
    text: str
    mention: bool = False  # whether it mentions the bot


# The thread's parent first; the bot is mentioned only by the third message.
CONVERSATION = (
    Message(ids.USER_ID, "Release 2.4 is blocked: the database migration still needs a review."),
    Message(BOB_ID, "I reviewed and approved the migration. We can ship on Thursday."),
    Message(ids.USER_ID, "can you sum up where the release stands?", mention=True),
    Message(ids.USER_ID, "Thanks! What should we check before we ship?"),
)

CHECKLIST = (
    "Before shipping, check:\n"
    "1. the migration runs cleanly on a copy of production data;\n"
    "2. the rollback steps are written down;\n"
    "3. someone is on call for the hour after the deploy."
)


OUTSIDE_SCRIPT = (
    "I'm the demo's scripted model: I can only sum up the thread and list what to check "
    "before a release."
)


def demo_reply(body: dict[str, Any]) -> Completion:
    """The scripted model's next tool call for the log in a chat completion request (a
    verdict for a judge's question; a plain text for anything else)."""
    asked_text = _log_text(body)
    try:
        log = json.loads(asked_text)
    except ValueError:
        log = None
    if isinstance(log, dict) and {"REFERENCE", "CANDIDATE"} <= log.keys():
        return _verdict(log["REFERENCE"], log["CANDIDATE"])
    if isinstance(log, dict) and {"question", "ANSWER"} <= log.keys():
        return _live_verdict(log["ANSWER"])
    if not isinstance(log, list) or not all(isinstance(e, dict) for e in log):
        return plain_text(OUTSIDE_SCRIPT)
    asked = next((e for e in reversed(log) if e.get("role") == "user"), None)
    if asked is None:
        return finish_request("There is no message to answer.")
    since = log[log.index(asked) + 1 :]
    done = [e["content"].get("toolCall") for e in since if e.get("role") == "assistant"]
    text = asked["content"]["text"]
    if "postMessage" in done:
        return finish_request("The question is answered.")
    if re.search(r"sum (it )?up|stand|status", text, re.I):
        if "getThreadHistory" not in done:
            return tool_calls(
                (
                    "getThreadHistory",
                    {"ascending": True, "reasoning": "The answer is in the thread's messages"},
                )
            )
        return _post(_summary(since), "Summing up the thread's messages")
    if re.search(r"check", text, re.I):
        offered = _offered(body)
        if CHECKLIST_TOOL in done:
            result = next(e["content"] for e in since if e.get("role") == "system")
            return _post(result.split("\n", 1)[-1], "Passing on the release checklist")
        if CHECKLIST_TOOL in offered:
            arguments = {"release": "2.4", "reasoning": "The release tool has the checklist"}
            return tool_calls((CHECKLIST_TOOL, arguments))
        return _post(CHECKLIST, "Listing what to check before a release")
    return _post(OUTSIDE_SCRIPT, "The question is outside the demo's script")


def _verdict(reference: Any, candidate: Any) -> Completion:
    """The judge's answer (assistant.model.judging): the same post again is as good as the
    recorded one; the script cannot tell a better one, so any other is worse."""
    same = str(reference).strip() == str(candidate).strip()
    verdict = {
        "verdict": "as good" if same else "worse",
        "reason": "The same reply as the recorded one."
        if same
        else "The demo's scripted judge takes any change from the recorded reply as worse.",
    }
    return plain_text(json.dumps(verdict))


def _live_verdict(answer: Any) -> Completion:
    """The live judge's answer (ASSISTANT_JUDGE_SAMPLE, assistant.model.judging): the script's
    own answers are good; its word that a question is outside the script is poor."""
    outside = str(answer).strip() == OUTSIDE_SCRIPT
    verdict = {
        "verdict": "poor" if outside else "good",
        "reason": "The question is outside the demo's script."
        if outside
        else "The demo's scripted judge takes the script's own answers as good.",
    }
    return plain_text(json.dumps(verdict))


def _offered(body: dict[str, Any]) -> set[str]:
    """The tools a request offers: its `tools`, or in the constrained mode of a server that
    ignores tool_choice, the `toolCall`s its response_format's schema allows."""
    names = {tool["function"]["name"] for tool in body.get("tools", [])}
    schema = body.get("response_format", {}).get("json_schema", {}).get("schema", {})
    return names | {entry["properties"]["toolCall"]["const"] for entry in schema.get("oneOf", [])}


def _post(text: str, reasoning: str) -> Completion:
    return tool_calls(("postMessage", {"text": text, "reasoning": reasoning}))


def _summary(since: list[dict[str, Any]]) -> str:
    history = next(
        (
            e["content"]
            for e in since
            if e.get("role") == "system" and e["content"].startswith("Thread history")
        ),
        "",
    )
    said = [line.split("] ", 1)[1] for line in history.splitlines()[1:] if "] " in line]
    points = [line for line in said if "?" not in line]  # what people said, not asked
    if not points:
        return "I could not find anything about the release in this thread."
    return "Where the release stands, from this thread:\n" + "\n".join(f"• {p}" for p in points)


def _log_text(body: dict[str, Any]) -> str:
    """The log the request carries: the last message's text (its first part with images)."""
    messages = body.get("messages")
    last = messages[-1] if isinstance(messages, list) and messages else {}
    content = last.get("content") if isinstance(last, dict) else None
    if isinstance(content, list):
        content = next(
            (part.get("text") for part in content if isinstance(part, dict) and "text" in part),
            "",
        )
    return content if isinstance(content, str) else ""
