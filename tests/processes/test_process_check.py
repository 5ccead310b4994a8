"""tests/process_check.py: a process a test started that outlives it is killed, and the test
fails naming it; so is one left by a test that timed out, or by a crashed xdist worker (the
run fails). Each case is a small suite run by pytest in a subprocess, which writes the pid of
the process it leaves to a file."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli import ROOT, show_output
from tests.process import ProcessGroup, clean_env
from tests.process_check import EXIT_GRACE, Process, descendants, started_since, still_running

# Starts `sleep` as its child, writes its pid to PIDFILE, then waits for it (forever).
PARENT = (
    "import subprocess, sys\n"
    "child = subprocess.Popen(['sleep', '3600'])\n"
    "open(sys.argv[1], 'w').write(str(child.pid))\n"
    "child.wait()\n"
)


def run_suite(
    tmp_path: Path, test: str, *options: str
) -> tuple[subprocess.CompletedProcess[str], Path]:
    """Run `test` as test_it.py with tests.process_check loaded; the result, and the file the
    test writes the pid it leaves to."""
    (tmp_path / "test_it.py").write_text(test, encoding="utf-8")
    (tmp_path / "parent.py").write_text(PARENT, encoding="utf-8")
    pidfile = tmp_path / "left.pid"
    plugins = ["-p", "tests.process_check", "-p", "no:cacheprovider", "-p", "no:randomly"]
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", *plugins, *options, "test_it.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        # What the tests leave is left on purpose: no need to give it time to exit.
        env={
            "PYTHONPATH": str(ROOT),
            "PATH": "/usr/bin:/bin",
            "PIDFILE": str(pidfile),
            "TEST_EXIT_GRACE": "1",
        },
        timeout=300,
    )
    show_output(result.stdout, result.stderr)
    return result, pidfile


def running(pid: int) -> bool:
    return any(p.pid == pid for p in descendants())


def test_a_clean_suite_passes(tmp_path):
    clean = (
        "import subprocess, sys\n\n"
        "def test_waits_for_what_it_starts():\n"
        "    assert subprocess.run([sys.executable, '-c', 'pass']).returncode == 0\n"
    )
    result, _ = run_suite(tmp_path, clean)
    assert result.returncode == 0, result.stdout


def test_a_process_that_outlives_its_test_is_killed_and_fails_it(tmp_path):
    leaves = (
        "import os, subprocess\n\n"
        "def test_leaves_a_process():\n"
        "    child = subprocess.Popen(['sleep', '3600'])\n"
        "    open(os.environ['PIDFILE'], 'w').write(str(child.pid))\n"
    )
    result, pidfile = run_suite(tmp_path, leaves)
    assert result.returncode == 1, result.stdout
    pid = int(pidfile.read_text())
    assert "ERROR at teardown of test_leaves_a_process" in result.stdout
    assert f"processes the test started outlived it (killed): {pid} (sleep 3600)" in result.stdout
    assert not running(pid)


def test_a_grandchild_left_by_a_timed_out_test_is_killed(tmp_path):
    """The test waits on a child that never ends; pytest-timeout fails it, and the child is
    killed as subprocess.run kills it, but not the child's own child: handed to the test's
    process (a subreaper), it is found and killed too."""
    hangs = (
        "import os, subprocess, sys, time\n\n"
        "def test_hangs():\n"
        "    subprocess.run([sys.executable, 'parent.py', os.environ['PIDFILE']])\n"
    )
    result, pidfile = run_suite(tmp_path, hangs, "--timeout=10")
    assert result.returncode == 1, result.stdout
    assert "Timeout" in result.stdout
    pid = int(pidfile.read_text())
    assert f"outlived it (killed): {pid} (sleep 3600)" in result.stdout
    assert not running(pid)


def test_what_a_crashed_worker_left_is_killed_at_the_end_of_the_session(tmp_path):
    crashes = (
        "import os, subprocess, sys, time\n\n"
        "def test_crashes():\n"
        "    child = subprocess.Popen(['sleep', '3600'])\n"
        "    open(os.environ['PIDFILE'], 'w').write(str(child.pid))\n"
        "    os._exit(1)\n"
    )
    result, pidfile = run_suite(tmp_path, crashes, "-n", "1")
    assert result.returncode == 1, result.stdout
    pid = int(pidfile.read_text())
    said = f"processes the tests started outlived the session (killed): {pid} (sleep 3600)"
    assert said in result.stdout
    assert not running(pid)


def test_descendants_are_found_by_parent_and_told_apart_from_reused_pids():
    with subprocess.Popen(["sleep", "3600"]) as child:
        try:
            [found] = [p for p in descendants() if p.pid == child.pid]
            assert found.command == "sleep 3600"
            assert found != Process(child.pid, found.started + 1, found.command)
            assert found == Process(child.pid, found.started, "python")  # before its exec
        finally:
            child.kill()
    assert not running(child.pid)


def test_a_process_group_left_by_an_exception_is_killed_whole(tmp_path):
    """As a benchmark's smoke run that timed out: the processes it started go with it."""
    (tmp_path / "parent.py").write_text(PARENT, encoding="utf-8")
    args = [sys.executable, "parent.py", str(tmp_path / "child.pid")]
    before = descendants()
    with (
        pytest.raises(subprocess.TimeoutExpired),
        ProcessGroup(args, env=clean_env(), cwd=tmp_path) as group,
    ):
        child = started_since(before, "sleep 3600", timeout=600)
        group.wait(0.1)  # the parent waits for its child: forever
    assert not still_running(frozenset({child}), EXIT_GRACE)


def test_pythons_own_helpers_are_not_taken_for_a_tests(tmp_path):
    """multiprocessing's resource tracker, started by a test's spawned process and serving
    the pytest process until it exits."""
    spawns = (
        "import multiprocessing\n\n"
        "def test_spawns():\n"
        "    spawn = multiprocessing.get_context('spawn')\n"
        "    barrier = spawn.Barrier(1)\n"  # a semaphore: the tracker is started for it
        "    process = spawn.Process(target=print)\n"
        "    process.start()\n"
        "    process.join()\n"
        "    assert process.exitcode == 0 and barrier.parties == 1\n"
    )
    result, _ = run_suite(tmp_path, spawns)
    assert result.returncode == 0, result.stdout
