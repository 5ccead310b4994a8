"""`assistant replay`: saved logs and stored threads sent to a model again, whole or as they
stood at an earlier entry, with another model or persona if asked; several at once make a
report that sets each replay beside what the recorded log did."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assistant.commands import CliError
from assistant.commands.io import (
    check_writable,
    file_or_thread,
    read_log_text,
    read_text,
    write_output,
)
from assistant.commands.slack import _settings_error
from assistant.commands.stored import existing_store
from assistant.replay.markdown import markdown_report
from assistant.replay.report import Outcome, Side, Summary, jsonl_report, last_asked, recorded_next
from assistant.replay.shown import run_steps, step_line, stops
from assistant.settings.environment import Settings, SettingsError, load_settings
from context.canonical import export_json
from context.entry import Entry, SystemEntry, make_entry
from context.log import ContextLog
from context.render import printable
from context.storage import EntryMeta, ThreadKey, ThreadMessage
from context.trace import open_trace
from context.validate import validate_log


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    replay = commands.add_parser(
        "replay",
        help="send saved logs or stored threads to the model and show what it does next",
        description="Send each log to the model and print, as a trace, the entries it adds. "
        "Nothing is sent to Slack. Exit status 0 when every replay ran, 1 when one did not "
        "(the reason on standard error). Needs OPENAI_API_KEY, unless --demo-model.",
    )
    replay.add_argument(
        "inputs",
        nargs="+",
        metavar="INPUT",
        help="a log file, - for standard input, or a stored thread TEAM/CHANNEL/THREAD_TS "
        "(read from DATABASE_URL); a file wins over a thread id of the same name",
    )
    replay.add_argument(
        "--at",
        metavar="INDEX",
        type=_index,
        help="replay each log as it stood before entry INDEX (entries 0 to INDEX-1), to set "
        "the new answer beside the one recorded",
    )
    replay.add_argument("--model", help="the model to ask, instead of ASSISTANT_MODEL")
    replay.add_argument(
        "--prompt-file",
        metavar="FILE",
        help="a persona to replay with: its text replaces entry 0 of each log",
    )
    replay.add_argument("--out", metavar="FILE", help="write the extended log (one input only)")
    replay.add_argument(
        "--report",
        metavar="FILE",
        help="write a report: per input the cut, what the log recorded next and what the "
        "replay did; Markdown, or JSON Lines when FILE ends in .jsonl",
    )
    replay.add_argument(
        "--demo-model",
        action="store_true",
        help="ask the scripted model of `assistant demo` (local; needs no OPENAI_API_KEY)",
    )
    replay.set_defaults(handler=run_replay)


def _index(text: str) -> int:
    try:
        index = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an entry index: {text!r}") from None
    if index < 1:
        raise argparse.ArgumentTypeError("INDEX must be 1 or more: entry 0 alone is no log")
    return index


@dataclass
class Input:
    source: str
    entries: list[Entry] = field(default_factory=list)
    metadata: list[EntryMeta] | None = None  # a stored thread's; a file has none
    thread: list[ThreadMessage] | None = None  # a stored thread's Slack messages, if complete
    problem: str | None = None  # why it cannot be replayed


def run_replay(args: argparse.Namespace) -> int:
    if args.out and len(args.inputs) > 1:
        raise CliError("--out takes one input; for several, use --report")
    if args.inputs.count("-") > 1:
        raise CliError("standard input (-) can be read only once")
    for out in (args.out, args.report):
        if out is not None:
            check_writable(out)  # before the model is asked anything
    persona = read_persona(args.prompt_file) if args.prompt_file else None
    with contextlib.ExitStack() as stack:
        settings = model_settings(stack, args.model, args.demo_model)
        inputs = _load(args.inputs)
        outcomes, extended = asyncio.run(_replay_all(settings, inputs, args.at, persona))
    if args.out and extended is not None:
        write_output(export_json(extended), args.out)
    if args.report:
        write_output(_report(args, settings, outcomes), args.report)
    several = len(outcomes) > 1
    for outcome in outcomes:
        _say_shown(outcome, several)
        _say_why(outcome, several)
    if several:
        print(f"replay: {Summary(outcomes).line()}", file=sys.stderr)
    return 0 if all(o.status == "ran" for o in outcomes) else 1


def model_settings(stack: contextlib.ExitStack, model: str | None, demo_model: bool) -> Settings:
    """The settings a command that asks the model runs with (`replay`, `eval`): `model`
    instead of ASSISTANT_MODEL; with `demo_model`, the demo's scripted model, started on
    loopback until `stack` closes."""
    overrides: dict[str, Any] = {}
    if model and demo_model:
        # The scripted model would answer under any name: never under a real one's.
        raise CliError("--model names a model of the server; --demo-model is the demo's own")
    if model:
        overrides["assistant_model"] = model
    if demo_model:
        from assistant.fakes import ids
        from assistant.fakes.demo import DEMO_MODEL
        from assistant.serving.demo import scripted_model

        fake = stack.enter_context(scripted_model())
        overrides.update(
            openai_api_key=ids.OPENAI_API_KEY,
            openai_base_url=fake.base_url,
            assistant_model=DEMO_MODEL,
        )
    try:
        return load_settings("replay", **overrides)
    except SettingsError as exc:
        raise _settings_error("the settings are incomplete", exc) from None


def read_persona(path: str) -> str:
    text = read_text(path).strip()
    if not text:
        raise CliError(f"{path} is empty: a persona is needed to replace entry 0")
    return text


def _load(sources: list[str]) -> list[Input]:
    """Every input read and checked; a store is opened only for thread ids."""
    inputs: list[Input] = []
    threads: list[tuple[Input, ThreadKey]] = []
    for source in sources:
        item = Input(source)
        inputs.append(item)
        # An input that cannot be read is a usage error (exit 2, README), found before any
        # replay is run: CliError goes up.
        found = file_or_thread(source)
        if isinstance(found, ThreadKey):
            threads.append((item, found))
            continue
        report = validate_log(read_log_text(found))
        if report.problems:
            name = "<stdin>" if source == "-" else source
            for problem in report.problems:
                print(f"{name}: {problem}", file=sys.stderr)
            item.problem = f"not a valid log ({len(report.problems)} problems)"
        item.entries = list(report.entries)
    if threads:
        with existing_store("replay") as store:
            for item, key in threads:
                if not store.has_thread(key):
                    item.problem = f"no thread {key} in the store (see `assistant threads`)"
                    continue
                item.entries, item.metadata = store.entries(key), store.metadata(key)
                messages, complete = store.thread_messages(key)
                item.thread = messages if complete else None
    return inputs


async def _replay_all(
    settings: Settings, inputs: list[Input], at: int | None, persona: str | None
) -> tuple[list[Outcome], list[Entry] | None]:
    """The outcomes, and the extended log of the last input that ran (for --out)."""
    labels: dict[ThreadKey, str] = {}
    trace = open_trace(
        settings.telemetry.trace, sys.stdout, labels.get, header_first=len(inputs) > 1
    )
    outcomes, extended = [], None
    # Loaded here, not at the top: the model client and the agent take a second to import,
    # which every other command would pay.
    from assistant.replay.replayer import Replayer

    async with Replayer(settings, trace) as replayer:
        for number, item in enumerate(inputs, 1):
            key = ThreadKey("replay", str(number), "0")
            labels[key] = item.source if at is None else f"{item.source}, at entry {at}"
            outcome = _cut(item, at, persona)
            if isinstance(outcome, Outcome):
                outcomes.append(outcome)
                continue
            sent, recorded, thread = outcome
            done = await replayer.replay(
                ContextLog(sent), key, thread, item.entries, item.metadata or ()
            )
            failed = done.failed
            # The cards a live run answering the same entry shows: the same function.
            cards = run_steps(done.entries, sent[-1].index) if done.new else []
            outcomes.append(
                Outcome(
                    item.source,
                    at,
                    len(item.entries),
                    last_asked(sent),
                    recorded,
                    Side(done.new, done.metadata, cards),
                    "failed" if failed else "ran",
                    str(done.entries[-1].content) if failed else None,
                    stops(item.entries),
                )
            )
            extended = done.entries
    return outcomes, extended


def _cut(
    item: Input, at: int | None, persona: str | None
) -> Outcome | tuple[list[Entry], Side, list[ThreadMessage] | None]:
    """What to send (entries 0 to at-1, the persona replaced), what was recorded after it,
    and the Slack thread as it stood then; or the Outcome of an input that cannot be
    replayed."""
    if item.problem is not None:
        return Outcome(item.source, at, problem=item.problem)
    size = len(item.entries)
    if at is not None and at > size:
        problem = f"--at {at} is past the end of the log ({size} entries)"
        return Outcome(item.source, at, size, problem=problem)
    cut = size if at is None else at
    sent = list(item.entries[:cut])
    if persona is not None:
        first = sent[0]
        if not isinstance(first, SystemEntry):
            problem = "entry 0 is not a persona (a system entry): --prompt-file cannot replace it"
            return Outcome(item.source, at, size, problem=problem)
        sent[0] = make_entry(0, first.turn, first.timestamp, persona)
    after = recorded_next(item.entries, cut)
    meta = item.metadata[cut : cut + len(after)] if item.metadata is not None else None
    # What the recorded run showed, as the log stood when it ended: the same first entry as
    # the replay answers (the last one sent), so the two sides' cards compare.
    cards = run_steps(item.entries, cut - 1, after[-1].index) if after else []
    return sent, Side(after, meta, cards), _thread_then(item, cut)


def _thread_then(item: Input, cut: int) -> list[ThreadMessage] | None:
    """The thread's messages up to the last one the sent entries know by Slack ts (people's
    messages, posted replies): what getThreadHistory would have read at the cut."""
    if item.thread is None or item.metadata is None:
        return None
    known = [float(meta.slack_ts) for meta in item.metadata[:cut] if meta.slack_ts]
    if not known:
        return None
    return [message for message in item.thread if float(message.ts) <= max(known)]


def _say_shown(outcome: Outcome, several: bool) -> None:
    """Beside the trace (standard output stays the new entries alone, as `ASSISTANT_TRACE`
    prints them): the stops the log records, and the thinking steps of what the log recorded
    after the cut and of what the replay did."""
    where = f"{outcome.source}: " if several else ""
    for stop in outcome.stops:
        print(printable(f"replay: {where}stopped in the log, {stop.line()}"), file=sys.stderr)
    for side, name in ((outcome.recorded, "as recorded"), (outcome.replay, "replayed")):
        if side is not None and side.cards:
            shown = "; ".join(step_line(card) for card in side.cards)
            print(printable(f"replay: {where}thinking steps {name}: {shown}"), file=sys.stderr)


def _say_why(outcome: Outcome, several: bool) -> None:
    """Standard error names every input that did not replay (invalid logs listed already)."""
    if outcome.status == "failed":
        last = outcome.replay.entries[-1].index if outcome.replay else "?"
        where = f"{outcome.source}: " if several else ""
        print(f"replay: {where}the run failed (entry {last})", file=sys.stderr)
    elif outcome.status == "not run" and not (outcome.problem or "").startswith("not a valid"):
        print(f"replay: {outcome.source}: {outcome.problem}", file=sys.stderr)


def _report(args: argparse.Namespace, settings: Settings, outcomes: list[Outcome]) -> str:
    if Path(args.report).suffix.lower() == ".jsonl":
        return jsonl_report(outcomes)
    persona = f"from {args.prompt_file}" if args.prompt_file else "each log's own (entry 0)"
    model = settings.model.name + (" (the demo's scripted model)" if args.demo_model else "")
    return markdown_report(outcomes, model, persona)
