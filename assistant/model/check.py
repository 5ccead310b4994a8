"""What a model server does for each model the app asks (`assistant check`; `serve` and `run`
print its summary at start): reachable, the model present, tool calls honoured, streaming with
usage, images, the window. Each finding says what to set when it is wrong
(docs/command-line.md, "assistant check")."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from assistant.model.options import Wanted

if TYPE_CHECKING:  # the settings import this module's callers' types without the client
    from assistant.model.client import ModelClient, Probe
    from assistant.model.server_window import ServerSettings

NOT_REACHED = "could not be reached"
MIN_LOG_TOKENS = 1_000  # as the settings ask of ASSISTANT_CONTEXT_TOKENS (run/core/prompt.py)
WINDOW_FIX = (
    "ASSISTANT_CONTEXT_TOKENS about 10% below the server's context for one request "
    "(llama.cpp -c per slot, vLLM --max-model-len, Ollama num_ctx)"
)


@dataclass(frozen=True)
class Finding:
    """One line of the table: `ok` True (works), None (works, with a caveat), False (will not
    work as set); `fix`: what to set."""

    model: str
    what: str
    ok: bool | None
    said: str
    fix: str = ""


async def check_models(client: ModelClient, models: Sequence[str], wanted: Wanted) -> list[Finding]:
    """Every finding for `models` on the client's server (in order: the first is the
    server's own line)."""
    findings: list[Finding] = []
    for model in dict.fromkeys(models):
        probe = await client.probe(model)
        if NOT_REACHED in probe.failed or "HTTP 401" in probe.failed:
            fix = "OPENAI_API_KEY" if "HTTP 401" in probe.failed else "OPENAI_BASE_URL"
            findings.append(Finding(model, "reachable", False, probe.failed, fix))
            return findings  # nothing else can be asked of it
        if not findings:
            findings.append(Finding(model, "reachable", True, f"answers at {client.where}"))
        findings += await _model_findings(client, model, probe, wanted)
    return findings


async def _model_findings(
    client: ModelClient, model: str, probe: Probe, wanted: Wanted
) -> list[Finding]:
    if probe.absent:
        fix = "ASSISTANT_MODEL (or the channel's model) to a model the server serves"
        return [Finding(model, "model present", False, probe.failed, fix)]
    if not probe.answered:
        # A server that answers no chat request answers no question: nothing else can be
        # told of the model, and every line says so.
        found = [Finding(model, "chat", False, f"no answer: {probe.failed}", _chat_fix(probe))]
        said = "not known: the server answered no chat request"
        found += [Finding(model, what, None, said) for what in ANSWERED_CHECKS]
        found.append(await _window(client, model, wanted))
        return found
    found = [Finding(model, "model present", True, "answered")]
    window = await _window(client, model, wanted)  # what the server tells of itself too
    found.append(_tool_calls(model, probe, wanted.tool_mode, client.told.get(model)))
    found.append(_streaming(model, probe, wanted.stream))
    if not wanted.images:
        found.append(Finding(model, "images", True, "none sent (ASSISTANT_MAX_IMAGES=0)"))
    else:
        takes = await client.takes_images(model)
        fix = "ASSISTANT_MAX_IMAGES=0, or a model with vision (llama.cpp: --mmproj)"
        if takes:
            found.append(Finding(model, "images", True, "taken"))
        elif takes is False:
            found.append(Finding(model, "images", None, "refused: none sent from now on", fix))
        else:
            found.append(Finding(model, "images", None, "could not tell", fix))
    found.append(window)
    return found


# What only an answer to a chat request tells: each a line of its own, "not known" without one.
ANSWERED_CHECKS = ("tool calls", "streaming with usage", "images")


def _chat_fix(probe: Probe) -> str:
    if probe.too_long:
        return "a larger window: see the window's line"
    if probe.failed.startswith("no answer in"):
        return "OPENAI_TIMEOUT (a model on a CPU: docs/model-servers.md), or a faster model"
    return "OPENAI_BASE_URL: a server with OpenAI's Chat Completions at its /v1/chat/completions"


def _tool_calls(model: str, probe: Probe, mode: str, told: ServerSettings | None) -> Finding:
    if probe.tool_call:
        return Finding(model, "tool calls", True, 'tool_choice "required" honoured')
    said = 'answered in plain text where tool_choice "required" asked for a tool call'
    if mode == "tools":
        return Finding(model, "tool calls", False, said, "ASSISTANT_TOOL_MODE=auto (or json)")
    if mode == "json":
        return Finding(model, "tool calls", True, f"{said}; asked as JSON (ASSISTANT_TOOL_MODE)")
    skip = "ASSISTANT_TOOL_MODE=json to skip this probe"
    tools = told.template_tools if told is not None else None
    if tools is None:  # no llama.cpp /props to read: the flag it may lack
        fix = f"{skip}; or a template with tools (llama.cpp --jinja)"
    elif tools:
        said += " (its chat template takes tools: the model wrote text)"
        fix = f"{skip}; or a model that calls tools"
    else:
        said += " (its chat template takes no tools, llama.cpp's /props says)"
        fix = f"{skip}; or a template with tools (llama.cpp --chat-template-file)"
    return Finding(model, "tool calls", None, f"{said}; asked as JSON from now on", fix)


def _streaming(model: str, probe: Probe, stream: bool) -> Finding:
    what = "streaming with usage"
    if not stream:
        return Finding(model, what, True, "not asked (ASSISTANT_STREAM=off)")
    if probe.refused_stream:
        said = f"refused: {probe.refused_stream}; answers asked whole"
        return Finding(model, what, None, said, "ASSISTANT_STREAM=off")
    if not probe.streamed:
        return Finding(model, what, None, "answered whole", "ASSISTANT_STREAM=off")
    if not probe.usage:
        said = "streams without usage: tokens not calibrated, `assistant usage` counts none"
        return Finding(model, what, None, said, "a server that sends stream_options usage")
    return Finding(model, what, True, "streams, with usage")


async def _window(client: ModelClient, model: str, wanted: Wanted) -> Finding:
    window = await client.window(model)
    named = window.tokens if window is not None else None
    answer = client.answer_tokens(model)
    learned = not wanted.answer_tokens_set and answer != wanted.answer_tokens
    capped = (
        f"the answer's cap ({answer}, learned from the server)"
        if learned
        else f"ASSISTANT_ANSWER_TOKENS ({answer})"
    )
    if named is None:
        said = f"not told: ASSISTANT_CONTEXT_TOKENS ({wanted.context_tokens}) is taken"
        return Finding(model, "window", None, said, WINDOW_FIX)
    least = wanted.fixed_tokens + answer + MIN_LOG_TOKENS
    if named < least:
        # No thread could be answered: the instructions, the tools and the answer's cap
        # leave the log too little for a persona and a question.
        said = (
            f"{named} tokens cannot hold the instructions and tools ({wanted.fixed_tokens}), "
            f"{capped} and a log of {MIN_LOG_TOKENS}: {least} at least"
        )
        fix = f"a window of {least} or more (llama.cpp -c, vLLM --max-model-len, Ollama num_ctx)"
        room = named - wanted.fixed_tokens - MIN_LOG_TOKENS
        if room >= 100:
            fix += f", or ASSISTANT_ANSWER_TOKENS={room}"
        return Finding(model, "window", False, said, fix)
    if not learned and named <= answer * 2:
        said = f"{named} tokens, too few beside ASSISTANT_ANSWER_TOKENS ({answer})"
        return Finding(model, "window", False, said, f"ASSISTANT_ANSWER_TOKENS={named // 4}")
    cap = f"; answers capped at {answer} tokens (learned)" if learned else ""
    if named < wanted.context_tokens:
        said = (
            f"{named} tokens, below ASSISTANT_CONTEXT_TOKENS ({wanted.context_tokens}): "
            f"prompts are cut to it{cap}"
        )
        return Finding(model, "window", None, said, f"ASSISTANT_CONTEXT_TOKENS={named * 9 // 10}")
    return Finding(model, "window", True, f"{named} tokens{cap}")


def table(findings: Sequence[Finding]) -> str:
    """The findings, one line each: model, what, verdict, what was found, what to set."""
    verdict = {True: "ok", None: "warn", False: "FAIL"}
    rows = [("model", "check", "", "found", "set")]
    rows += [(f.model, f.what, verdict[f.ok], f.said, f.fix) for f in findings]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    return "\n".join(
        "  ".join(
            [*(cell.ljust(width) for cell, width in zip(row[:4], widths, strict=True)), row[4]]
        ).rstrip()
        for row in rows
    )


def summary(where: str, findings: Sequence[Finding]) -> str:
    """One line: all well, or what is not (run `assistant check` for what to set)."""
    wrong = [f for f in findings if f.ok is not True]
    if not wrong:
        models = ", ".join(dict.fromkeys(f.model for f in findings))
        return f"model check of {where}: all well for {models}"
    failing = sum(f.ok is False for f in wrong)
    said = "; ".join(f"{f.model} {f.what}: {f.said}" for f in wrong)
    return (
        f"model check of {where}: {failing} failing, {len(wrong) - failing} to look at: {said} "
        "(`assistant check` says what to set)"
    )
