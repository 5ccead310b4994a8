"""Benchmarks of speed, scale and prompt economy (issue #5); see bench/README.md.

Run from the repository root: `python -m bench` (all), `python -m bench NAME` (one),
`--smoke` for minimal sizes that record nothing.
"""
