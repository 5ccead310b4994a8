"""The package as pip builds it carries what the installed app reads at run time: a wheel
install (the README's quick start) must work away from the checkout."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from tests.cli import ROOT


def test_the_wheel_holds_the_manifest_the_oauth_flow_reads(tmp_path: Path):
    # Built from a copy: setuptools writes its build and egg-info folders beside the sources.
    source = tmp_path / "source"
    skip = shutil.ignore_patterns("__pycache__", "*.egg-info")
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    for package in ("assistant", "context"):
        shutil.copytree(ROOT / package, source / package, ignore=skip)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", tmp_path,
         source],
        check=True, timeout=300,
    )  # fmt: skip
    (wheel,) = tmp_path.glob("*.whl")
    assert "assistant/manifest.yml" in zipfile.ZipFile(wheel).namelist()
    assert (ROOT / "manifest.yml").resolve() == ROOT / "assistant" / "manifest.yml"
