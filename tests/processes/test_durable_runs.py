"""Durable runs against real crashes: the chaos script (`python -m bench chaos`) at its
smallest size, killing real `assistant serve` processes (the traces a crash leaves, in
process: tests/app/test_durable_runs.py)."""

from __future__ import annotations

from bench import chaos


def test_chaos_at_its_smallest_size_loses_and_doubles_nothing():
    """`python -m bench chaos` with one SIGKILL of a real `serve` process (the full run, 100
    mentions and 10 kills, is in bench/RESULTS.md)."""
    figures = chaos.run(smoke=True)
    assert [f for f in figures if f.met is False] == []
    assert any(f.met for f in figures)
