"""tests/tree_check.py: a suite that leaves a file in its git checkout fails, naming it."""

from __future__ import annotations

import subprocess
import sys

from tests.cli import ROOT, show_output


def run_suite(repo, test: str) -> subprocess.CompletedProcess[str]:
    (repo / "test_it.py").write_text(test, encoding="utf-8")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "tests.tree_check",
            "-q",
            "-p",
            "no:randomly",
            "-p",
            "no:cacheprovider",
            "test_it.py",
        ],
        cwd=repo,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        timeout=120,
    )
    show_output(result.stdout, result.stderr)
    return result


def test_a_suite_that_leaves_a_file_in_the_checkout_fails(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("__pycache__/\n", encoding="utf-8")  # as ours does
    clean = run_suite(tmp_path, "def test_nothing():\n    pass\n")
    assert clean.returncode == 0, clean.stdout
    # test_it.py itself was there before the session: only what the tests add counts.
    dirty = run_suite(
        tmp_path,
        "import sqlite3\n\ndef test_leaves_a_database():\n"
        "    sqlite3.connect('test_store_0123456789ab').close()\n",
    )
    assert dirty.returncode == 1, dirty.stdout
    said = "the tests left the checkout dirty (write under tmp_path): ?? test_store_0123456789ab"
    assert said in dirty.stdout


def test_outside_a_git_checkout_nothing_is_checked(tmp_path):
    leaves = run_suite(tmp_path, "def test_leaves():\n    open('stray.txt', 'w').close()\n")
    assert leaves.returncode == 0, leaves.stdout
