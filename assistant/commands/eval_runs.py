"""`assistant eval rescore RUN`, `assistant eval diff RUN_A RUN_B` and `assistant eval runs`:
a kept run (in the store with an id, or `assistant eval --save-run DIR`) scored again without
asking the model, two kept runs side by side, and the runs the store keeps
(docs/evaluation.md, "Saved runs")."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from assistant.commands import CliError, when
from assistant.commands.io import check_writable, named, one_line
from assistant.commands.replay import model_settings
from assistant.commands.stored import existing_store, store_if_any
from assistant.eval.ask import Config
from assistant.eval.diff import Diff
from assistant.eval.diff import markdown as diff_markdown
from assistant.eval.diff import table as diff_table
from assistant.eval.diff import write_json as diff_json
from assistant.eval.report import Run, markdown, summary_line, table, write_json
from assistant.eval.runner import CaseResult, Limits, Totals, run_cases
from assistant.eval.runs import (
    DirectoryRun,
    EvalRunError,
    KeptRun,
    Results,
    ResultsSink,
    RunWriter,
    SavedRun,
    StoredAnswers,
    StoredRun,
    StoredRunWriter,
    config_entries,
    read_cases,
)
from assistant.eval.spool import ResultSpool, Rows
from assistant.eval.trajectory import MODES, Match
from assistant.model.client import ModelClient
from assistant.model.judging import Judge
from assistant.run.core.post_limits import PostCaps
from assistant.settings.environment import Settings
from context.render import printable
from context.storage import EvalRunRow, Store


def register_rescore(parser: argparse.ArgumentParser, count: Any, rate: Any) -> None:
    parser.add_argument(
        "run", metavar="RUN", help="a kept run: its id in the store, or a `--save-run` directory"
    )
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
    parser.add_argument(
        "--no-store", action="store_true", help="do not keep the run scored again in the store"
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
    parser.add_argument(
        "run_a", metavar="RUN_A", help="a kept run (an id or a directory): the one before"
    )
    parser.add_argument(
        "run_b", metavar="RUN_B", help="a kept run (an id or a directory): the one after"
    )
    parser.add_argument("--json", action="store_true", help="print the comparison as JSON")
    parser.add_argument("--report", metavar="FILE", help="write a Markdown report to FILE")
    parser.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="exit 1 when a case passes less often in RUN_B than in RUN_A",
    )
    parser.set_defaults(handler=run_diff)


def register_runs(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print the runs as JSON")
    parser.add_argument(
        "--delete",
        metavar="ID",
        type=_run_id,
        nargs="+",
        help="delete these runs (their cases, answers and scores) from the store",
    )
    parser.add_argument(
        "--delete-before",
        metavar="WHEN",
        type=when.since,
        help="delete the runs begun before WHEN (30d, or a UTC date or time)",
    )
    parser.set_defaults(handler=run_runs)


def _run_id(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or len(text) > 18 or int(text) < 1:
        raise argparse.ArgumentTypeError(f"not a run's id: {text!r}")
    return int(text)


def is_run_id(text: str) -> bool:
    """A run's id (a whole number) rather than a directory: a directory named as a number is
    named `./7`."""
    return text.isascii() and text.isdigit() and len(text) <= 18 and not Path(text).exists()


def open_run(text: str, stack: contextlib.ExitStack, store: list[Store]) -> SavedRun:
    """The run RUN names: an id in the store (opened once, kept in `store`) or a directory."""
    try:
        if is_run_id(text):
            if not store:
                store.append(stack.enter_context(existing_store("eval")))
            return StoredRun(store[0], int(text))
        return DirectoryRun(Path(text))
    except EvalRunError as exc:
        raise CliError(str(exc)) from None


def keep_run(
    stack: contextlib.ExitStack,
    store: Store | None,
    save_run: str | None,
    label: str,
) -> KeptRun | None:
    """Where a new run is kept: the store (when there is one), the directory of --save-run."""
    kept = KeptRun()
    try:
        if save_run:
            writer = RunWriter(Path(save_run))
            stack.callback(writer.close)
            kept.add(writer)
        if store is not None:
            stored = StoredRunWriter(store, label)
            stack.callback(stored.close)
            kept.add(stored)
    except EvalRunError as exc:
        raise CliError(str(exc)) from None
    return kept if kept.sinks else None


def finish_run(kept: KeptRun, manifest: dict[str, Any], save_run: str | None, what: str) -> None:
    try:
        kept.finish(manifest)
    except EvalRunError as exc:
        raise CliError(str(exc)) from None
    if save_run:
        print(f"eval: {what} is saved in {save_run}", file=sys.stderr)
    if kept.stored is not None:
        print(f"eval: {what} is kept in the store as run {kept.stored.id}", file=sys.stderr)


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
    if args.report:
        check_writable(args.report)
    with contextlib.ExitStack() as stack:
        opened: list[Store] = []
        saved_run = open_run(args.run, stack, opened)
        manifest = saved_run.manifest
        where = f"{saved_run.name}: manifest"
        caps = _caps(manifest, where)
        trials: int = manifest["trials"]
        beat = manifest.get("trials_beat")
        if beat is not None and (type(beat) is not int or beat < 1):
            raise CliError(f"{where}: `trials_beat` must be null or a count")
        match = _match_of(manifest, args, where)
        settings = model_settings(stack, None, args.demo_model) if args.judge else None
        store = None
        if not args.no_store:
            store = opened[0] if opened else stack.enter_context(store_if_any("eval"))
        kept = keep_run(stack, store, args.save_run, f"rescore {saved_run.name}")
        if kept is not None:
            try:
                kept.write_cases(saved_run.logs())
            except EvalRunError as exc:
                raise CliError(str(exc)) from None
        runs = []
        for number, entry in enumerate(manifest["configs"], 1):
            spool = ResultSpool()
            stack.callback(spool.close)
            try:
                reader = saved_run.results(number)
            except EvalRunError as exc:
                raise CliError(str(exc)) from None
            stack.callback(reader.close)
            results = kept.results(number) if kept is not None else None
            rescoring = Rescoring(saved_run, reader, trials, beat, caps, settings, match)
            try:
                run = asyncio.run(rescoring.run(_config(entry), args, spool, results))
            except EvalRunError as exc:
                raise CliError(str(exc)) from None
            runs.append(replace(run, mode=str(entry.get("tool_mode", "tools"))))
        if kept is not None:
            document = {
                key: value for key, value in manifest.items() if key not in ("format", "version")
            }
            if match is not None:
                document["trajectory"] = manifest["trajectory"] | match.describe()
            document |= {
                "judge": args.judge,
                "rescored_from": saved_run.name,
                "configs": config_entries(runs, trials),
            }
            finish_run(kept, document, args.save_run, "the run scored again")
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
        saved: SavedRun,
        reader: Results,
        trials: int,
        beat: int | None,
        caps: PostCaps,
        settings: Settings | None,
        match: Match | None = None,
    ) -> None:
        self.saved, self.reader, self.trials = saved, reader, trials
        self.match = match
        self.limits = Limits(beat_trials=beat)
        self.caps, self.settings = caps, settings

    async def run(
        self,
        config: Config,
        args: argparse.Namespace,
        spool: ResultSpool,
        saved: ResultsSink | None,
    ) -> Run:
        asker = StoredAnswers(config)
        totals = Totals()

        def done(result: CaseResult) -> None:
            spool.add(result)
            if saved is not None:
                saved.add(result)

        def trials_of(case: Any) -> int:
            return self.limits.trials_of(case, self.trials)

        cases = asker.cases(read_cases(self.saved), self.reader, trials_of)
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
    with contextlib.ExitStack() as stack:
        opened: list[Store] = []
        saved = [open_run(args.run_a, stack, opened), open_run(args.run_b, stack, opened)]
        manifests = [run.manifest for run in saved]
        firsts = [manifest["configs"][0] for manifest in manifests]
        readers = []
        for run in saved:
            try:
                reader = run.results(1)
            except EvalRunError as exc:
                raise CliError(str(exc)) from None
            stack.callback(reader.close)
            readers.append(reader)
        try:
            diff = Diff(readers[0], readers[1])
            labels = (printable(firsts[0]["name"]), printable(firsts[1]["name"]))
            summaries = [
                f"{side} {printable(run.name)}: {_summary(entry, manifest)}"
                for side, run, entry, manifest in zip("AB", saved, firsts, manifests, strict=True)
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


def run_runs(args: argparse.Namespace) -> int:
    """`assistant eval runs`: the runs the store keeps, newest first; or some deleted."""
    with existing_store("eval") as store:
        if args.delete or args.delete_before is not None:
            return _delete_runs(store, args)
        rows = store.eval_runs()
    listed = [_listed(row) for row in rows]
    if args.json:
        print(printable(json.dumps({"runs": listed}, ensure_ascii=False)))
        return 0
    head = ["id", "when", "set", "configs", "pass@1", "pass^k", "status"]
    lines = [head] + [
        [
            str(item["id"]),
            str(item["created_at"])[:19].replace("T", " "),
            one_line(str(item["label"]))[:60],
            ", ".join(one_line(str(c["name"])) for c in item["configs"]),
            " / ".join(_rate_shown(c["pass@1"]) for c in item["configs"]) or "-",
            " / ".join(_rate_shown(c["pass^k"]) for c in item["configs"]) or "-",
            str(item["status"]),
        ]
        for item in listed
    ]
    widths = [max(len(line[n]) for line in lines) for n in range(len(head))]
    for line in lines:
        print("  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip())
    print(f"{len(listed)} runs kept")
    return 0


def _rate_shown(value: object) -> str:
    return f"{value:.2f}" if isinstance(value, float | int) else "-"


def _listed(row: EvalRunRow) -> dict[str, Any]:
    """A run as `eval runs` lists it, from its manifest (unfinished: none yet)."""
    item: dict[str, Any] = {
        "id": row.id,
        "created_at": row.created_at,
        "label": row.label,
        "status": "unfinished",
        "trials": None,
        "configs": [],
    }
    if row.manifest is None:
        return item
    try:
        manifest = json.loads(row.manifest)
    except ValueError:
        return item | {"status": "unreadable"}
    if not isinstance(manifest, dict):
        return item | {"status": "unreadable"}
    found = manifest.get("configs")
    configs: list[Any] = found if isinstance(found, list) else []
    stopped = manifest.get("stopped")
    item["status"] = "stopped" if isinstance(stopped, str) else "finished"
    if isinstance(manifest.get("rescored_from"), str):
        item["rescored_from"] = manifest["rescored_from"]
    item["trials"] = manifest.get("trials") if type(manifest.get("trials")) is int else None
    for config in configs:
        if not isinstance(config, dict):
            continue
        figures = config.get("summary")
        summary: dict[str, Any] = figures if isinstance(figures, dict) else {}
        item["configs"].append(
            {
                "name": str(config.get("name") or config.get("model") or ""),
                "model": str(config.get("model") or ""),
                "cases": _int(summary.get("cases")),
                "pass@1": _float(summary.get("pass@1")),
                "pass^k": _float(summary.get("pass^k")),
            }
        )
    return item


def _delete_runs(store: Store, args: argparse.Namespace) -> int:
    ids = list(args.delete or [])
    if args.delete_before is not None:
        cutoff = when.shown(args.delete_before)
        ids += [row.id for row in store.eval_runs() if row.created_at < cutoff]
    missing = [run_id for run_id in args.delete or [] if store.eval_run(run_id) is None]
    if missing:
        raise CliError(f"no eval run {missing[0]} in the store (see `assistant eval runs`)")
    deleted = sum(store.delete_eval_run(run_id) for run_id in dict.fromkeys(ids))
    print(f"eval runs: {deleted} runs deleted")
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
