"""`assistant eval rescore RUN` and `assistant eval diff RUN_A RUN_B`: a saved run
(`assistant eval --save-run DIR`) scored again without asking the model, and two saved runs
side by side (docs/evaluation.md, "Saved runs")."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from assistant.commands import CliError
from assistant.commands.io import check_writable, named
from assistant.commands.replay import model_settings
from assistant.eval.ask import Config
from assistant.eval.diff import Diff
from assistant.eval.diff import markdown as diff_markdown
from assistant.eval.diff import table as diff_table
from assistant.eval.diff import write_json as diff_json
from assistant.eval.judge import Judge
from assistant.eval.report import Run, markdown, summary_line, table, write_json
from assistant.eval.runner import CaseResult, Limits, Totals, run_cases
from assistant.eval.runs import (
    EvalRunError,
    ResultsReader,
    ResultsWriter,
    RunWriter,
    StoredAnswers,
    config_entries,
    read_cases,
    read_manifest,
)
from assistant.eval.sets import read_set
from assistant.eval.spool import ResultSpool, Rows
from assistant.eval.trajectory import MODES, Match
from assistant.model.client import ModelClient
from assistant.run.core.post_limits import PostCaps
from assistant.settings.environment import Settings
from context.render import printable


def register_rescore(parser: argparse.ArgumentParser, count: Any, rate: Any) -> None:
    parser.add_argument("run", metavar="RUN", help="a run saved with `eval --save-run DIR`")
    parser.add_argument(
        "--judge",
        metavar="MODEL",
        help="ask MODEL whether each saved post is better, as good or worse than the recorded one",
    )
    parser.add_argument(
        "--judge-base-url",
        metavar="URL",
        help="the judge's OpenAI-compatible server (default: OPENAI_BASE_URL; same key)",
    )
    parser.add_argument(
        "--demo-model",
        action="store_true",
        help="the judge is the scripted model of `assistant demo` (--judge demo-model)",
    )
    parser.add_argument("--concurrency", metavar="N", type=count, default=4, help="judge calls")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--report", metavar="FILE", help="write a Markdown report to FILE")
    parser.add_argument(
        "--min-pass",
        metavar="RATE",
        type=rate,
        help="exit 1 when pass^k over the cases is below RATE (0 to 1)",
    )
    parser.add_argument(
        "--match",
        choices=MODES,
        help="a trajectory run (`eval --trajectory`): score its paths in this mode instead",
    )
    parser.add_argument(
        "--match-args",
        action="store_true",
        help="a trajectory run: calls match only with the same arguments",
    )
    parser.add_argument(
        "--save-run", metavar="DIR", help="keep the run scored again in the new directory DIR"
    )
    parser.set_defaults(handler=run_rescore)


def _match_of(manifest: dict[str, Any], args: argparse.Namespace, where: str) -> Match | None:
    """A trajectory run's match (its manifest's `trajectory`), changed by --match and
    --match-args; None for a run of one-step cases."""
    saved = manifest.get("trajectory")
    if saved is None:
        if args.match is not None or args.match_args:
            raise CliError(f"{where}: --match and --match-args score a trajectory run; not this")
        return None
    mode = saved.get("match") if isinstance(saved, dict) else None
    arguments = saved.get("match_args") if isinstance(saved, dict) else None
    if mode not in MODES or not isinstance(arguments, bool):
        raise CliError(f"{where}: `trajectory` must hold the run's `match` and `match_args`")
    return Match(args.match or mode, arguments or args.match_args)


def register_diff(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_a", metavar="RUN_A", help="a saved run: the one before")
    parser.add_argument("run_b", metavar="RUN_B", help="a saved run: the one after")
    parser.add_argument("--json", action="store_true", help="print the comparison as JSON")
    parser.add_argument("--report", metavar="FILE", help="write a Markdown report to FILE")
    parser.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="exit 1 when a case passes less often in RUN_B than in RUN_A",
    )
    parser.set_defaults(handler=run_diff)


def _manifest(text: str) -> dict[str, Any]:
    try:
        return read_manifest(Path(text))
    except EvalRunError as exc:
        raise CliError(str(exc)) from None


def _caps(manifest: dict[str, Any], where: str) -> PostCaps:
    caps = manifest.get("caps")
    fields = PostCaps.__dataclass_fields__
    if not isinstance(caps, dict) or set(caps) != set(fields):
        raise CliError(f"{where}: `caps` must hold the caps the run was scored with")
    if not all(type(v) is int and v >= 0 for v in caps.values()):
        raise CliError(f"{where}: `caps` must be whole numbers")
    return PostCaps(**caps)


def _config(entry: dict[str, Any]) -> Config:
    temperature = entry.get("temperature")
    strings = [entry.get(k) for k in ("base_url", "persona", "instructions")]
    return Config(
        entry["model"],
        strings[0] if isinstance(strings[0], str) else None,
        None,
        strings[1] if isinstance(strings[1], str) else None,
        temperature if isinstance(temperature, int | float) else None,
        entry["name"],
        None,
        strings[2] if isinstance(strings[2], str) else None,
        channel_models=entry.get("channel_models") is True,
    )


def _check_judge(args: argparse.Namespace) -> None:
    if args.judge_base_url and not args.judge:
        raise CliError("--judge-base-url is the server of --judge")
    if args.demo_model and not args.judge:
        raise CliError("--demo-model is the judge's server: --judge demo-model")
    if args.demo_model:
        from assistant.fakes.demo import DEMO_MODEL

        if args.judge != DEMO_MODEL and not args.judge_base_url:
            raise CliError(
                f"--judge {named(args.judge)}: with --demo-model its server is the demo's "
                f"scripted model: --judge {DEMO_MODEL}, or --judge-base-url for another server"
            )


def run_rescore(args: argparse.Namespace) -> int:
    _check_judge(args)
    directory = Path(args.run)
    manifest = _manifest(args.run)
    where = f"{directory / 'manifest.json'}"
    caps = _caps(manifest, where)
    trials: int = manifest["trials"]
    match = _match_of(manifest, args, where)
    beat = manifest.get("trials_beat")
    if beat is not None and (type(beat) is not int or beat < 1):
        raise CliError(f"{where}: `trials_beat` must be null or a count")
    if args.report:
        check_writable(args.report)
    with contextlib.ExitStack() as stack:
        settings = model_settings(stack, None, args.demo_model) if args.judge else None
        saved = None
        if args.save_run:
            try:
                saved = RunWriter(Path(args.save_run))
                stack.callback(saved.close)
                saved.write_cases(read_set(directory / "cases"))
            except EvalRunError as exc:
                raise CliError(str(exc)) from None
        runs = []
        for number, entry in enumerate(manifest["configs"], 1):
            spool = ResultSpool()
            stack.callback(spool.close)
            try:
                reader = ResultsReader(directory, entry["results"])
            except EvalRunError as exc:
                raise CliError(str(exc)) from None
            stack.callback(reader.close)
            results = saved.results(number) if saved is not None else None
            rescoring = Rescoring(directory, reader, trials, beat, caps, settings, match)
            try:
                run = asyncio.run(rescoring.run(_config(entry), args, spool, results))
            except EvalRunError as exc:
                raise CliError(str(exc)) from None
            runs.append(replace(run, mode=str(entry.get("tool_mode", "tools"))))
        if saved is not None:
            document = {
                key: value for key, value in manifest.items() if key not in ("format", "version")
            }
            if match is not None:
                document["trajectory"] = manifest["trajectory"] | match.describe()
            document |= {
                "judge": args.judge,
                "rescored_from": str(directory),
                "configs": config_entries(runs, trials),
            }
            try:
                saved.finish(document)
            except EvalRunError as exc:
                raise CliError(str(exc)) from None
            print(f"eval: the run scored again is saved in {args.save_run}", file=sys.stderr)
        args.trials = trials
        show(args, runs)
    return exit_status(runs, args.min_pass, trials)


def exit_status(runs: list[Run], min_pass: float | None, trials: int) -> int:
    """1 when a trial could not ask its model or pass^k is below --min-pass, each said."""
    errors = sum(run.totals.errors for run in runs)
    if errors:
        print(f"eval: {errors} trials could not ask the model (see the results)", file=sys.stderr)
    below = min_pass is not None and runs[0].totals.pass_k < min_pass
    if below:
        print(
            f"eval: pass^{trials} {runs[0].totals.pass_k:.2f} is below --min-pass {min_pass:g}",
            file=sys.stderr,
        )
    return 1 if errors or below else 0


class Rescoring:
    """One configuration of a saved run, scored again: its saved answers through the same
    runner and scores as the run (and the judge, when one is named)."""

    def __init__(
        self,
        directory: Path,
        reader: ResultsReader,
        trials: int,
        beat: int | None,
        caps: PostCaps,
        settings: Settings | None,
        match: Match | None = None,
    ) -> None:
        self.directory, self.reader, self.trials = directory, reader, trials
        self.match = match
        self.limits = Limits(beat_trials=beat)
        self.caps, self.settings = caps, settings

    async def run(
        self,
        config: Config,
        args: argparse.Namespace,
        spool: ResultSpool,
        saved: ResultsWriter | None,
    ) -> Run:
        asker = StoredAnswers(config)
        totals = Totals()

        def done(result: CaseResult) -> None:
            spool.add(result)
            if saved is not None:
                saved.add(result)

        def trials_of(case: Any) -> int:
            return self.limits.trials_of(case, self.trials)

        cases = asker.cases(read_cases(self.directory), self.reader, trials_of)
        async with contextlib.AsyncExitStack() as stack:
            judge = None
            if args.judge and self.settings is not None:
                options = self.settings.model.options()
                base_url = args.judge_base_url or options.base_url
                judging = replace(options, model=args.judge, base_url=base_url, instructions=None)
                judge = Judge(await stack.enter_async_context(ModelClient(judging)))
            await run_cases(
                cases,
                asker,
                self.trials,
                args.concurrency,
                self.caps,
                done,
                totals,
                judge,
                shown=True,
                limits=self.limits,
                keep_answers=True,
                match=self.match,
            )
        return Run(config, spool, totals)


def run_diff(args: argparse.Namespace) -> int:
    if args.report:
        check_writable(args.report)
    manifests = [_manifest(args.run_a), _manifest(args.run_b)]
    firsts = [manifest["configs"][0] for manifest in manifests]
    with contextlib.ExitStack() as stack:
        readers = []
        for text, entry in zip((args.run_a, args.run_b), firsts, strict=True):
            try:
                reader = ResultsReader(Path(text), entry["results"])
            except EvalRunError as exc:
                raise CliError(str(exc)) from None
            stack.callback(reader.close)
            readers.append(reader)
        try:
            diff = Diff(readers[0], readers[1])
            labels = (printable(firsts[0]["name"]), printable(firsts[1]["name"]))
            summaries = [
                f"{side} {printable(text)}: {_summary(entry, manifest)}"
                for side, text, entry, manifest in zip(
                    "AB", (args.run_a, args.run_b), firsts, manifests, strict=True
                )
            ]
            if args.report:
                try:
                    with open(args.report, "w", encoding="utf-8") as report:
                        diff_markdown(diff, labels, summaries, report)
                except OSError as exc:
                    raise CliError(f"cannot write {named(args.report)}: {exc.strerror}") from None
            if args.json:
                runs = [
                    {"run": text, "config": entry}
                    for text, entry in zip((args.run_a, args.run_b), firsts, strict=True)
                ]
                diff_json(diff, runs, sys.stdout)
            else:
                diff_table(diff, labels, summaries, sys.stdout)
        except EvalRunError as exc:
            raise CliError(str(exc)) from None
    print(f"eval diff: {diff.counts_line()}", file=sys.stderr)
    regressed = diff.counts["regressed"]
    if regressed and args.fail_on_regression:
        print(f"eval diff: {regressed} cases regressed", file=sys.stderr)
        return 1
    return 0


def _summary(entry: dict[str, Any], manifest: dict[str, Any]) -> str:
    """The run's line as `eval` printed it, from its manifest's figures."""
    figures = entry.get("summary")
    if not isinstance(figures, dict):
        return printable(str(entry["name"]))
    totals = Totals(
        cases=_int(figures.get("cases")),
        errors=_int(figures.get("errors")),
        stopped=figures.get("stopped") if isinstance(figures.get("stopped"), str) else None,
    )
    k = manifest["trials"]
    line = (
        f"{printable(str(entry['name']))}: {totals.cases} cases x {k} trials: pass@1 "
        f"{_float(figures.get('pass@1')):.2f}, pass^{k} {_float(figures.get('pass^k')):.2f}, "
        f"{totals.errors} errors"
    )
    return line + (f" (stopped: {printable(totals.stopped)})" if totals.stopped else "")


def _int(value: object) -> int:
    return value if type(value) is int else 0


def _float(value: object) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def show(args: argparse.Namespace, runs: list[Run]) -> None:
    """The results, read back from their spools a case at a time."""
    rows = Rows([run.results for run in runs])
    try:
        if args.report:
            try:
                with open(args.report, "w", encoding="utf-8") as report:
                    markdown(runs, rows, args.trials, report)
            except OSError as exc:
                raise CliError(f"cannot write {named(args.report)}: {exc.strerror}") from None
        if args.json:
            write_json(runs, rows, args.trials, sys.stdout)
        else:
            table(runs, rows, args.trials, sys.stdout)
        sys.stdout.flush()
    finally:
        rows.close()
    for run in runs:
        print(f"eval: {summary_line(run, args.trials)}", file=sys.stderr)
