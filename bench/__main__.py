"""`python -m bench [NAME ...] [--smoke]`: run the benchmarks (all but the chaos script unless
named), print their figures, and append them to bench/RESULTS.md (not with --smoke, whose tiny
sizes only show that each one runs)."""

from __future__ import annotations

import argparse
import importlib
import signal
import sys
import time
import traceback
from collections.abc import Sequence
from types import FrameType

from bench.report import RESULTS, Figure, append_results, machine, print_figures

# Name -> module with `run(smoke: bool) -> list[Figure]`; imported only when chosen.
BENCHMARKS = {
    "ack": "bench.ack",
    "ack_closed": "bench.ack_closed",
    "step": "bench.step",
    "economy": "bench.economy",
    "cost": "bench.cost",
    "slack_calls": "bench.slack_calls",
    "throughput": "bench.throughput",
    "store": "bench.store",
    "follow": "bench.follow",
    "prompt_prefix": "bench.prompt_prefix",
    "stream": "bench.stream",
    "chaos": "bench.chaos",
    "flood": "bench.flood",
    "usage": "bench.usage",
    "workers": "bench.workers",
    "telemetry": "bench.telemetry",
    "cpu": "bench.cpu",
    "ingress": "bench.ingress",
    "floor": "bench.floor",
    "eval": "bench.evaluation",
    "mcp_tools": "bench.mcp_tools",
    "mcp_sign_in": "bench.mcp_sign_in",
    "big_log": "bench.big_log",
    "budgets": "bench.budgets",
    "routines": "bench.routines",
    "memory": "bench.memory",
}
# What `python -m bench` runs: the measurements. The chaos script (SIGKILLs under load, a
# check of exactly-once answers rather than a figure of speed) runs when named.
DEFAULT = [name for name in BENCHMARKS if name != "chaos"]


def stop_on_signal(signum: int, frame: FrameType | None) -> None:
    """SIGTERM or SIGHUP ends the run as Ctrl-C does: the processes a benchmark started
    (`bench/server.py`) are stopped on the way out, not left running, handed to init."""
    raise SystemExit(128 + signum)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    for stop in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(stop, stop_on_signal)
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument(
        "names",
        nargs="*",
        metavar="NAME",
        help=f"{', '.join(BENCHMARKS)} (default: all but chaos)",
    )
    parser.add_argument("--smoke", action="store_true", help="minimal sizes, nothing recorded")
    args = parser.parse_args(argv)
    unknown = [n for n in args.names if n not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark {', '.join(unknown)}; choose from {', '.join(BENCHMARKS)}")
    command = " ".join(["python -m bench", *argv])
    print(f"{command}  (cores: {machine()})", flush=True)
    failed = []
    for name in args.names or DEFAULT:
        started = time.perf_counter()
        try:
            figures: list[Figure] = importlib.import_module(BENCHMARKS[name]).run(args.smoke)
        except Exception:
            traceback.print_exc()
            failed.append(name)
            figures = [Figure("run", "failed (see the traceback printed above)", "runs", False)]
        figures.append(Figure("benchmark wall time", f"{time.perf_counter() - started:.1f} s"))
        print_figures(name, figures)
        sys.stdout.flush()
        if not args.smoke:
            append_results(name, figures, command)
    if not args.smoke:
        print(f"\nappended to {RESULTS}")
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
