"""`assistant eval`: every recorded decision of the assistant as a test case, asked again of a
model configuration; scored offline, with pass@1 and pass^k, a table, JSON or a Markdown
report, and an exit status for CI (docs/evaluation.md, "Evaluating a change")."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import math
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TextIO

from assistant.commands import CliError, when
from assistant.commands.eval_runs import (
    exit_status,
    finish_run,
    keep_run,
    register_diff,
    register_rescore,
    register_runs,
    show,
)
from assistant.commands.io import (
    check_writable,
    file_or_thread,
    named,
    read_input,
    read_text,
    redaction_key_path,
    write_redaction_key,
)
from assistant.commands.replay import model_settings, read_persona
from assistant.commands.stored import existing_store, store_if_any
from assistant.commands.verdicts import register as register_verdicts
from assistant.eval.ask import Answer, Asker, Config
from assistant.eval.cases import Case, Feedback, cases_of
from assistant.eval.report import Run
from assistant.eval.runner import CaseResult, Limits, Totals, run_cases
from assistant.eval.runs import EvalRunError, KeptRun, ResultsSink, config_entries
from assistant.eval.sets import EvalSetError, SetWriter, is_eval_set, read_manifest, read_set
from assistant.eval.spool import ResultSpool
from assistant.eval.trajectory import (
    DEFAULT_LENGTH_FACTOR,
    MODES,
    Match,
    TrajectoryAsker,
    trajectory_cases,
)
from assistant.model.client import ModelClient
from assistant.model.judging import Judge
from assistant.run.core.prompt import PromptBudget
from assistant.settings.environment import Settings, SettingsError, load_usage_settings
from context.channels import merged
from context.entry import Entry
from context.redaction import Redactor
from context.storage import Store, ThreadKey
from context.validate import validate_log

MAX_TRIALS = 100
MAX_CONCURRENCY = 64
MAX_STEPS = 100  # as ASSISTANT_MAX_STEPS allows
MAX_LENGTH_FACTOR = 100.0
CONFIRM_CALLS = 200  # a run over this many model calls is estimated and asks to go on


class _EvalParser(argparse.ArgumentParser):
    """`eval [INPUT…]`, `eval rescore RUN`, `eval diff RUN_A RUN_B`, `eval runs` and `eval
    verdicts`: the first word picks the parser (argparse cannot give one parser both a list
    of INPUTs and subcommands)."""

    words: dict[str, argparse.ArgumentParser]

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        if args and args[0] in self.words:
            return self.words[args[0]].parse_known_args(args[1:], namespace)
        return super().parse_known_args(args, namespace)


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "eval",
        help="run every recorded decision again against a model configuration and score it",
        description="Each assistant decision in the given logs becomes a case: the log as it "
        "stood before it, the recorded step as the reference. Each case is asked of the model "
        "(one step, nothing carried out, nothing posted, no thread written) and scored. Exit "
        "status 0, 1 when a trial could not ask the model or the pass rate is below --min-pass, "
        "2 for bad input. Needs OPENAI_API_KEY, unless --demo-model. "
        "Every run is kept in the store (unless --no-store) with an id: `assistant eval runs` "
        "lists them; `assistant eval rescore RUN` scores a kept run (an id, or a --save-run "
        "directory) again; `assistant eval diff RUN_A RUN_B` compares two; `assistant eval "
        "verdicts` reports the live judge's verdicts (see their --help).",
    )
    # The class argparse gave it, made the one that dispatches `rescore` and `diff`.
    parser.__class__ = _EvalParser
    assert isinstance(parser, _EvalParser)
    rescore = argparse.ArgumentParser(
        prog=f"{parser.prog} rescore",
        description="Score a saved run (`eval --save-run DIR`) again, without asking the "
        "model: its saved answers, its caps, a new --judge and --min-pass. Exit status as "
        "eval's.",
    )
    register_rescore(rescore, _count(MAX_CONCURRENCY), _rate)
    diff = argparse.ArgumentParser(
        prog=f"{parser.prog} diff",
        description="Two saved runs side by side, case by case (matched by the case's id, "
        "each run's first configuration): regressed, improved or unchanged in pass@1, worst "
        "first. Exit status 0, 1 with --fail-on-regression when a case regressed, 2 for bad "
        "input.",
    )
    register_diff(diff)
    runs = argparse.ArgumentParser(
        prog=f"{parser.prog} runs",
        description="The eval runs kept in the store (DATABASE_URL), newest first: id, when, "
        "the inputs, the configurations and their pass rates; --delete and --delete-before "
        "remove runs. A run stays until deleted.",
    )
    register_runs(runs)
    verdicts = argparse.ArgumentParser(
        prog=f"{parser.prog} verdicts",
        description="What the live judge (ASSISTANT_JUDGE_SAMPLE) said of the answers it "
        "judged, by channel and answering model: good, acceptable, poor, or failed (no "
        "verdict); --recent N lists the newest with the judge's reasons.",
    )
    register_verdicts(verdicts)
    parser.words = {"rescore": rescore, "diff": diff, "runs": runs, "verdicts": verdicts}
    parser.add_argument(
        "inputs",
        nargs="*",
        metavar="INPUT",
        help="a log file, a directory of log files, an eval set (a directory with a "
        "manifest.json, from --save) or a stored thread TEAM/CHANNEL/THREAD_TS",
    )
    parser.add_argument(
        "--all", action="store_true", help="every stored thread that matches the filters"
    )
    parser.add_argument("--team", metavar="TEAM", help="with --all: only this workspace's")
    parser.add_argument("--channel", metavar="CHANNEL", help="with --all: only this channel's")
    parser.add_argument(
        "--since",
        metavar="WHEN",
        type=when.since,
        help="with --all: only threads updated since WHEN (30m, 2h, 7d, or a UTC date or time)",
    )
    parser.add_argument(
        "--until",
        metavar="WHEN",
        type=when.since,
        help="with --all: only threads last updated before WHEN (same forms as --since)",
    )
    parser.add_argument(
        "--feedback",
        choices=("good", "bad", "any"),
        help="with --all: only threads with a 👍 (good), a 👎 (bad) or any vote",
    )
    parser.add_argument("--model", help="the model to ask, instead of ASSISTANT_MODEL")
    parser.add_argument("--base-url", metavar="URL", help="the server, instead of OPENAI_BASE_URL")
    parser.add_argument(
        "--prompt-file", metavar="FILE", help="a persona: its text replaces entry 0 of each case"
    )
    parser.add_argument(
        "--instructions-file",
        metavar="FILE",
        help="instructions to try: the text replaces the fixed system message of every call",
    )
    parser.add_argument("--temperature", type=_temperature, help="the sampling temperature, 0 to 2")
    parser.add_argument(
        "--demo-model",
        action="store_true",
        help="ask the scripted model of `assistant demo` (local; needs no OPENAI_API_KEY)",
    )
    parser.add_argument(
        "--judge",
        metavar="MODEL",
        help="ask MODEL whether each new post is better, as good or worse than the recorded one",
    )
    parser.add_argument(
        "--judge-base-url",
        metavar="URL",
        help="the judge's OpenAI-compatible server (default: the one evaluated; same key)",
    )
    parser.add_argument(
        "--against",
        metavar="CONFIG",
        help="compare with another configuration: a model name, or a JSON file "
        '{"model", "base_url", "prompt_file", "instructions_file", "temperature", "name"}',
    )
    parser.add_argument(
        "--trials", metavar="K", type=_count(MAX_TRIALS), default=1, help="trials per case (1)"
    )
    parser.add_argument(
        "--trials-beat",
        metavar="K",
        type=_count(MAX_TRIALS),
        help="trials for a case people gave a 👎 (to beat), instead of --trials",
    )
    parser.add_argument(
        "--max-tokens",
        metavar="N",
        type=_count(10**12),
        help="stop the run cleanly once it has used N tokens (prompt and answer): no trial "
        "is begun after, the cases that had all their trials are its results",
    )
    parser.add_argument(
        "--max-cost",
        metavar="USD",
        type=_dollars,
        help="stop the run cleanly once it has cost USD dollars (ASSISTANT_PRICES)",
    )
    parser.add_argument(
        "--save-run",
        metavar="DIR",
        help="keep the run in the new directory DIR too: its configuration, cases and every "
        "trial's answer and scores (keys and tokens replaced), for `eval rescore` and "
        "`eval diff`",
    )
    parser.add_argument(
        "--no-store",
        action="store_true",
        help="do not keep the run in the store (it is kept there with an id by default)",
    )
    parser.add_argument(
        "--concurrency",
        metavar="N",
        type=_count(MAX_CONCURRENCY),
        default=4,
        help="model calls at once (4)",
    )
    parser.add_argument(
        "--trajectory",
        action="store_true",
        help="a case per person's message: the model runs onward step by step, its tools "
        "answered from the recording, nothing carried out or posted; scored by trajectory "
        "match (--match)",
    )
    parser.add_argument(
        "--match",
        choices=MODES,
        help="with --trajectory: strict (the same calls in order, the default), unordered, "
        "subset (no call the recording lacks) or superset (every recorded call made)",
    )
    parser.add_argument(
        "--match-args",
        action="store_true",
        help="with --trajectory: calls match only with the same arguments (a post's text aside)",
    )
    parser.add_argument(
        "--max-steps",
        metavar="N",
        type=_count(MAX_STEPS),
        help="with --trajectory: stop a path after N model calls (ASSISTANT_MAX_STEPS, 8)",
    )
    parser.add_argument(
        "--length-factor",
        metavar="X",
        type=_length_factor,
        help="with --trajectory: stop a path after X times the recorded answer's calls "
        f"({DEFAULT_LENGTH_FACTOR:g})",
    )
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--report", metavar="FILE", help="write a Markdown report to FILE")
    parser.add_argument(
        "--min-pass",
        metavar="RATE",
        type=_rate,
        help="exit 1 when pass^k over the cases (every trial passed) is below RATE (0 to 1)",
    )
    parser.add_argument(
        "--save",
        metavar="DIR",
        help="write the cases as an eval set in the new directory DIR and run nothing",
    )
    parser.add_argument(
        "--redact-key",
        metavar="KEY_FILE",
        help="with --save: redact secrets, e-mail addresses, phone numbers and Slack user ids "
        "in the set, and write the key that undoes it to the new file KEY_FILE, outside DIR",
    )
    parser.add_argument(
        "--yes",
        action="store_true",
        help=f"run without asking when the estimate is over {CONFIRM_CALLS} model calls",
    )
    parser.add_argument(
        "--allow-empty",
        action="store_true",
        help="exit 0 when the inputs hold no case (without it: exit 1, no cases)",
    )
    parser.set_defaults(handler=run_eval)


def _count(most: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if not 1 <= value <= most:
            raise argparse.ArgumentTypeError(f"must be from 1 to {most}, not {value}")
        return value

    return parse


def _fraction(text: str, most: float) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value) or not 0 <= value <= most:
        raise argparse.ArgumentTypeError(f"must be from 0 to {most:g}, not {text!r}")
    return value


def _dollars(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a number of dollars over 0, not {text!r}")
    return value


def _length_factor(text: str) -> float:
    value = _fraction(text, MAX_LENGTH_FACTOR)
    if value == 0:
        raise argparse.ArgumentTypeError("must be over 0: a path of no step is no path")
    return value


def _rate(text: str) -> float:
    return _fraction(text, 1)


def _temperature(text: str) -> float:
    return _fraction(text, 2)


@dataclass(frozen=True)
class Sources:
    """Where the cases come from, read again for each configuration."""

    paths: list[Path]  # log files, in order (directories expanded)
    sets: list[Path]  # eval sets
    threads: list[ThreadKey]
    trajectory: bool = False  # a case per person's message, its whole answer the reference

    def known_total(self) -> int | None:
        """The number of cases, when the inputs are eval sets alone (their manifests say)."""
        if self.paths or self.threads:
            return None
        try:
            return sum(int(read_manifest(directory)["cases"]) for directory in self.sets)
        except EvalSetError:
            return None

    def cases(self, store: Store | None) -> Iterator[Case]:
        for _, _, cases in self.logs(store):
            yield from cases

    def logs(self, store: Store | None) -> Iterator[tuple[str, list[Entry], list[Case]]]:
        """Each log with its cases (for --save)."""
        for path in self.paths:
            entries = _log_file(path)
            yield str(path), entries, list(self._cases_of(str(path), entries))
        for directory in self.sets:
            try:
                for source, entries, cases in read_set(directory):
                    if self.trajectory:
                        cases = _as_trajectories(source, entries, cases)
                    yield source, entries, cases
            except EvalSetError as exc:
                raise CliError(str(exc)) from None
        for key in self.threads:
            assert store is not None
            entries = store.entries(key)
            yield str(key), entries, list(_thread_cases(store, key, entries, self.trajectory))

    def _cases_of(self, source: str, entries: list[Entry]) -> Iterator[Case]:
        if self.trajectory:
            return trajectory_cases(source, entries)
        return cases_of(source, entries)


def _as_trajectories(source: str, entries: list[Entry], cases: list[Case]) -> list[Case]:
    """A set's log as trajectory cases (a set saved with --trajectory holds them already):
    the people's feedback on a step carried to the answer that holds it."""
    model = cases[0].model if cases else None
    found = []
    for case in trajectory_cases(source, entries, model=model):
        indexes = {entry.index for entry in case.reference}
        said = {c.feedback for c in cases if c.reference[0].index in indexes}
        feedback: Feedback | None = "beat" if "beat" in said else "keep" if "keep" in said else None
        found.append(replace(case, feedback=feedback))
    return found


def _thread_cases(
    store: Store, key: ThreadKey, entries: list[Entry] | None = None, trajectory: bool = False
) -> Iterator[Case]:
    entries = store.entries(key) if entries is None else entries
    # The model a run in the thread's channel asks now: the channel's own, if it sets one.
    model = merged(*store.channel_configs_in_force(key.team, key.channel))["model"]
    assert model is None or isinstance(model, str)
    if trajectory:
        yield from trajectory_cases(str(key), entries, store.votes(key), model)
        return
    yield from cases_of(str(key), entries, store.metadata(key), store.votes(key), model)


def _log_file(path: Path) -> list[Entry]:
    report = validate_log(read_input(str(path)))
    if report.problems:
        raise CliError(f"{named(str(path))}: not a valid log: {report.problems[0]}")
    return report.entries


def _sources(args: argparse.Namespace, store: Store | None) -> Sources:
    paths: list[Path] = []
    sets: list[Path] = []
    threads: list[ThreadKey] = []
    for item in args.inputs:
        if item == "-":
            raise CliError("eval reads files, directories and stored threads, not standard input")
        found = file_or_thread(item)
        if isinstance(found, ThreadKey):
            threads.append(found)
            continue
        path = Path(found)
        if is_eval_set(path):
            try:
                read_manifest(path)
            except EvalSetError as exc:
                raise CliError(str(exc)) from None
            sets.append(path)
        elif path.is_dir():
            paths += sorted(p for p in path.iterdir() if p.suffix == ".json" and p.is_file())
        else:
            paths.append(path)
    if threads or args.all:
        assert store is not None
        for key in threads:
            if not store.has_thread(key):
                raise CliError(f"no thread {key} in the store (see `assistant threads`)")
        if args.all:
            threads += _matching(store, args)
    return Sources(paths, sets, threads, bool(args.trajectory))


def _matching(store: Store, args: argparse.Namespace) -> list[ThreadKey]:
    """The stored threads the filters keep, oldest update first (a stable order to rerun)."""
    found = []
    for summary in reversed(store.threads(args.channel, args.since)):
        if args.team and summary.key.team != args.team:
            continue
        if args.until is not None and summary.updated_at >= when.shown(args.until):
            continue
        votes = {"good": summary.good_votes, "bad": summary.bad_votes}
        if args.feedback == "any" and not any(votes.values()):
            continue
        if args.feedback in votes and not votes[args.feedback]:
            continue
        found.append(summary.key)
    return found


def _needs_store(args: argparse.Namespace) -> bool:
    if args.all:
        return True
    return any(item != "-" and isinstance(file_or_thread(item), ThreadKey) for item in args.inputs)


def _check_args(args: argparse.Namespace) -> None:
    if not args.inputs and not args.all:
        raise CliError("name log files, directories, eval sets or threads, or use --all")
    filters = [args.team, args.channel, args.since, args.until, args.feedback]
    if not args.all and any(value is not None for value in filters):
        raise CliError("--team, --channel, --since, --until and --feedback filter --all")
    if args.redact_key and not args.save:
        raise CliError("--redact-key redacts a set written with --save")
    path_options = [args.match, args.max_steps, args.length_factor]
    if not args.trajectory and (args.match_args or any(v is not None for v in path_options)):
        raise CliError(
            "--match, --match-args, --max-steps and --length-factor go with --trajectory"
        )
    if args.save_run and args.save:
        raise CliError("--save writes a set and runs nothing; --save-run keeps a run")
    if args.against and (args.max_tokens or args.max_cost):
        raise CliError(
            "--max-tokens and --max-cost stop one configuration's run: save each with "
            "--save-run and compare them with `assistant eval diff`"
        )


def run_eval(args: argparse.Namespace) -> int:
    _check_args(args)
    if args.report:
        check_writable(args.report)  # before the model is asked anything
    with contextlib.ExitStack() as stack:
        store = stack.enter_context(existing_store("eval")) if _needs_store(args) else None
        sources = _sources(args, store)
        if args.save:
            return _save(Path(args.save), sources, store, args.redact_key)
        settings = model_settings(stack, args.model, args.demo_model)
        configs = [_config(args, settings)]
        if args.against:
            configs.append(_against(args.against, settings))
        if args.demo_model:
            _only_the_demo_model(args, configs)
        if not args.demo_model:  # the demo's model is local and free
            _estimate(args, settings, configs, sources, store)
        saved = _run_writer(args, sources, store, stack)
        runs = []
        for number, config in enumerate(configs, 1):
            spool = ResultSpool()
            stack.callback(spool.close)
            results = saved.results(number) if saved is not None else None
            runs.append(asyncio.run(_run(config, settings, sources, store, args, spool, results)))
        if saved is not None:
            _finish_run(saved, args, runs, settings)
        show(args, runs)
    if not runs[0].totals.cases and not args.allow_empty:
        # An eval of nothing passes nothing: a CI step on a set or a filter that went
        # empty must not go green.
        print(
            "eval: no cases: the inputs hold no decision to evaluate (--allow-empty to accept)",
            file=sys.stderr,
        )
        return 1
    if not runs[0].totals.cases:
        print("eval: no cases: the inputs hold no decision to evaluate", file=sys.stderr)
    _say_stopped(runs)
    return exit_status(runs, args.min_pass, args.trials)


def _say_stopped(runs: list[Run]) -> None:
    for run in runs:
        if run.totals.stopped is not None:
            print(
                f"eval {run.config.label}: stopped after {run.totals.cases} cases: "
                f"{run.totals.stopped}",
                file=sys.stderr,
            )


def _run_writer(
    args: argparse.Namespace, sources: Sources, store: Store | None, stack: contextlib.ExitStack
) -> KeptRun | None:
    """Where the run is kept (the store unless --no-store, the directory of --save-run), its
    cases written before the model is asked."""
    if not args.no_store and store is None:
        store = stack.enter_context(store_if_any("eval"))
    kept = keep_run(stack, None if args.no_store else store, args.save_run, _label(args))
    if kept is None:
        return None
    try:
        kept.write_cases(sources.logs(store))
    except EvalRunError as exc:
        raise CliError(str(exc)) from None
    return kept


def _label(args: argparse.Namespace) -> str:
    """The run's inputs, as `eval runs` lists them."""
    words = list(args.inputs)
    if args.all:
        words.append("--all")
        for name in ("team", "channel", "feedback"):
            if getattr(args, name):
                words.append(f"--{name} {getattr(args, name)}")
    return " ".join(words)


def _finish_run(
    kept: KeptRun, args: argparse.Namespace, runs: list[Run], settings: Settings
) -> None:
    manifest = {
        "trials": args.trials,
        "trials_beat": args.trials_beat,
        "judge": args.judge,
        "caps": dataclasses.asdict(settings.answers.post_caps()),
        "stopped": next((r.totals.stopped for r in runs if r.totals.stopped), None),
        "trajectory": _trajectory(args, settings),
        "configs": config_entries(runs, args.trials),
    }
    finish_run(kept, manifest, args.save_run, "the run")


def _match(args: argparse.Namespace) -> Match | None:
    if not args.trajectory:
        return None
    return Match(args.match or "strict", bool(args.match_args))


def _trajectory(args: argparse.Namespace, settings: Settings) -> dict[str, object] | None:
    """How trajectory cases were run and scored, as a saved run's manifest keeps it."""
    match = _match(args)
    if match is None:
        return None
    return match.describe() | {
        "max_steps": args.max_steps or settings.answers.max_steps,
        "length_factor": args.length_factor or DEFAULT_LENGTH_FACTOR,
    }


def _limits(args: argparse.Namespace, config: Config) -> Limits:
    """The run's trials per case and hard stops; a cost is priced by ASSISTANT_PRICES (the
    demo's model is local and free)."""
    limits = Limits(args.max_tokens, args.max_cost, beat_trials=args.trials_beat)
    if args.max_cost is None:
        return limits
    if args.demo_model:
        limits.cost_of = lambda model, answer: 0.0
        return limits
    try:
        prices = load_usage_settings().assistant_prices
    except SettingsError as exc:
        raise CliError(str(exc)) from None
    if prices is None or prices.price_of(config.model) is None:
        raise CliError(
            f"--max-cost: no price for {named(config.model)} in ASSISTANT_PRICES, so the "
            "run's cost cannot be kept"
        )

    def cost_of(model: str, answer: Answer) -> float | None:
        price = prices.price_of(model) if prices is not None else None
        if price is None:
            return None
        return price.cost(answer.prompt_tokens, 0, answer.completion_tokens)

    limits.cost_of = cost_of
    return limits


def _only_the_demo_model(args: argparse.Namespace, configs: list[Config]) -> None:
    """With --demo-model the server is the demo's scripted model, which answers under any
    name: a configuration or a judge naming another model there would score it under a name
    it is not (a real model's). Another server is named by its base_url."""
    from assistant.fakes.demo import DEMO_MODEL

    for config in configs[1:]:
        if config.base_url is None and config.model != DEMO_MODEL:
            raise CliError(
                f"--against {named(args.against)}: with --demo-model its server is the demo's "
                f"scripted model ({DEMO_MODEL}), not {named(config.model)}; name another "
                'server in a JSON file {"model", "base_url"}'
            )
    if args.judge and not args.judge_base_url and args.judge != DEMO_MODEL:
        raise CliError(
            f"--judge {named(args.judge)}: with --demo-model its server is the demo's scripted "
            f"model: --judge {DEMO_MODEL}, or --judge-base-url for another server"
        )


def _estimate(
    args: argparse.Namespace,
    settings: Settings,
    configs: list[Config],
    sources: Sources,
    store: Store | None,
) -> None:
    """The run's calls, tokens and cost on stderr; over CONFIRM_CALLS calls, go on only with
    --yes or when the person at the terminal says so."""
    from assistant.eval.cost import estimate

    try:
        prices = load_usage_settings().assistant_prices
    except SettingsError as exc:
        raise CliError(str(exc)) from None
    found = estimate(
        sources.cases(store),
        [(config, _budgets(config, settings)) for config in configs],
        args.trials,
        prices,
        args.trials_beat,
    )
    print(f"eval: estimate: {found.line()}", file=sys.stderr, flush=True)
    if found.calls <= CONFIRM_CALLS or args.yes:
        return
    if not sys.stdin.isatty():
        raise CliError(f"{found.calls} model calls is over {CONFIRM_CALLS}: add --yes to run")
    answer = input(f"eval: {found.calls} model calls; go on? [y/N] ")
    if answer.strip().lower() not in ("y", "yes"):
        raise CliError("not run")


def _budgets(config: Config, settings: Settings) -> Callable[[str], PromptBudget]:
    """The context budget of a model under `config` (its instructions count in it)."""

    def budget(model: str) -> PromptBudget:
        return PromptBudget.for_window(
            model,
            settings.model.context_tokens,
            settings.model.answer_tokens,
            config.instructions,
        )

    return budget


def _save(directory: Path, sources: Sources, store: Store | None, key_file: str | None) -> int:
    redactor = Redactor() if key_file else None
    if key_file is not None:
        redaction_key_path(key_file, directory)
    try:
        writer = SetWriter(directory)
        for source, entries, cases in sources.logs(store):
            if redactor is not None:
                source = redactor.text(source)
                entries = [redactor.entry(entry) for entry in entries]
            writer.add(source, entries, cases)
        if redactor is not None and key_file is not None:
            write_redaction_key(redactor.key, key_file, directory)
        writer.finish({"redacted": redactor is not None})
    except EvalSetError as exc:
        raise CliError(str(exc)) from None
    print(f"eval: saved {writer.cases} cases of {len(writer.files)} logs in {directory}")
    return 0


def _config(args: argparse.Namespace, settings: Settings) -> Config:
    persona = read_persona(args.prompt_file) if args.prompt_file else None
    name = "demo model" if args.demo_model else ""
    return Config(
        settings.model.name,
        args.base_url,
        persona,
        args.prompt_file,
        args.temperature,
        name,
        _instructions(args.instructions_file) if args.instructions_file else None,
        args.instructions_file,
        channel_models=not args.model and not args.demo_model,
    )


def _instructions(path: str) -> str:
    text = read_text(path).strip()
    if not text:
        raise CliError(f"{named(path)} is empty: instructions are needed to replace the fixed ones")
    return text


def _against(text: str, settings: Settings) -> Config:
    path = Path(text)
    if not path.is_file():
        return Config(text)  # a model name, on the same server
    try:
        data = json.loads(read_input(text))
    except ValueError as exc:
        raise CliError(f"{named(text)}: not JSON ({exc})") from None
    known = {"model", "base_url", "prompt_file", "instructions_file", "temperature", "name"}
    if not isinstance(data, dict) or not set(data) <= known:
        raise CliError(f"{named(text)}: must be an object with {', '.join(sorted(known))}")
    strings = {k: data.get(k) for k in sorted(known - {"temperature"})}
    if not all(v is None or isinstance(v, str) for v in strings.values()):
        raise CliError(f"{named(text)}: {', '.join(sorted(strings))} are strings")
    temperature = data.get("temperature")
    if temperature is not None and (
        isinstance(temperature, bool)
        or not isinstance(temperature, int | float)
        or not 0 <= temperature <= 2
    ):
        raise CliError(f"{named(text)}: temperature must be a number from 0 to 2")
    prompt_file, instructions_file = strings["prompt_file"], strings["instructions_file"]
    return Config(
        strings["model"] or settings.model.name,
        strings["base_url"],
        read_persona(prompt_file) if prompt_file else None,
        prompt_file,
        temperature,
        strings["name"] or "",
        _instructions(instructions_file) if instructions_file else None,
        instructions_file,
        channel_models=strings["model"] is None,
    )


async def _run(
    config: Config,
    settings: Settings,
    sources: Sources,
    store: Store | None,
    args: argparse.Namespace,
    spool: ResultSpool,
    saved: ResultsSink | None = None,
) -> Run:
    """The configuration's run: each case's result spooled (and saved, with --save-run) as
    it ends, the totals kept."""
    limits = _limits(args, config)
    totals = Totals()
    progress = Progress(sys.stderr, config.label, sources.known_total())
    options = settings.model.options()

    def done(result: CaseResult) -> None:
        spool.add(result)
        if saved is not None:
            saved.add(result)
        progress.done(result)

    async with contextlib.AsyncExitStack() as stack:
        model = await stack.enter_async_context(ModelClient(Asker.options(config, options)))
        mode = await _probed(model, config, settings.model.check == "on")
        asker: Asker
        if args.trajectory:
            asker = stack.enter_context(
                TrajectoryAsker(
                    config,
                    model,
                    _budgets(config, settings),
                    args.max_steps or settings.answers.max_steps,
                    args.length_factor or DEFAULT_LENGTH_FACTOR,
                    settings.answers.post_caps(),
                )
            )
        else:
            asker = Asker(config, model, _budgets(config, settings))
        judge = None
        if args.judge:
            base_url = args.judge_base_url or config.base_url or options.base_url
            judging = replace(options, model=args.judge, base_url=base_url, instructions=None)
            judge = Judge(await stack.enter_async_context(ModelClient(judging)))
        await run_cases(
            sources.cases(store),
            asker,
            args.trials,
            args.concurrency,
            settings.answers.post_caps(),
            done,
            totals,
            judge,
            shown=bool(args.json or args.report or saved is not None),
            limits=limits,
            keep_answers=saved is not None,
            match=_match(args),
        )
    progress.end()
    return Run(config, spool, totals, mode)


async def _probed(model: ModelClient, config: Config, check: bool) -> str:
    """The server probed once before the first case, as `serve` does at start (unless
    ASSISTANT_MODEL_CHECK=off), so that no trial is asked in a mode the server ignores and
    scored for it (ASSISTANT_TOOL_MODE=auto: a server that ignores tool_choice is asked as
    JSON from the first case); its window read too (and the answer's cap learned from it).
    The mode the cases are asked in."""
    if check:
        probe = await model.probe(config.model)
        if not probe.answered:
            print(f"eval {config.label}: the probe failed: {probe.failed}", file=sys.stderr)
        await model.window(config.model)
    return "json" if model.in_json(config.model) else "tools"


class Progress:
    """A bar on a terminal (a count when the number of cases is not known ahead: threads and
    log files are read as they are run); elsewhere a line every 100 cases."""

    WIDTH = 30

    def __init__(self, stream: TextIO, label: str, total: int | None) -> None:
        self.stream, self.label, self.total = stream, label, total
        self.count = self.passed = 0
        self.tty = stream.isatty()

    def done(self, result: CaseResult) -> None:
        self.count += 1
        self.passed += result.pass_all
        if self.tty:
            shown = f"{self.count} cases"
            if self.total:
                filled = min(self.WIDTH, self.WIDTH * self.count // self.total)
                bar = "#" * filled + "-" * (self.WIDTH - filled)
                shown = f"[{bar}] {self.count}/{self.total} cases"
            line = f"\reval {self.label}: {shown}, {self.passed} passed"
            print(line, end="", file=self.stream, flush=True)
        elif self.count % 100 == 0:
            print(f"eval {self.label}: {self.count} cases done", file=self.stream, flush=True)

    def end(self) -> None:
        if self.tty and self.count:
            print(file=self.stream)
