"""What the project imports, it declares: every third-party module that `assistant`,
`context`, `bench` or `tests` import comes from a distribution named in pyproject.toml (its
dependencies or an extra), not one that happens to come along with another. And
requirements.lock, the pinned set for a reproducible deployment, pins each of them within
its lower bound (README: how to write it again)."""

from __future__ import annotations

import ast
import importlib.util
import os
import sys
import tomllib
from functools import cache
from importlib.metadata import distributions, packages_distributions

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from tests.cli import ROOT

OURS = ("assistant", "context", "bench", "tests")
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def declared() -> list[Requirement]:
    """The dependencies and every extra's, but the project itself (an extra naming another)."""
    texts = [*PROJECT["dependencies"]]
    for extra in PROJECT["optional-dependencies"].values():
        texts += extra
    found = [Requirement(text) for text in texts]
    name = canonicalize_name(PROJECT["name"])
    return [r for r in found if canonicalize_name(r.name) != name]


def imported() -> dict[str, str]:
    """Every absolute import of a module outside ours and the standard library in our
    packages: module -> a file that imports it."""
    found: dict[str, str] = {}
    for package in OURS:
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    top = name.partition(".")[0]
                    if top not in OURS and top not in sys.stdlib_module_names:
                        found.setdefault(name, str(path.relative_to(ROOT)))
    return found


@cache
def providers() -> dict[str, list[str]]:
    """Top-level import name -> the distributions that provide it."""
    return packages_distributions()


@cache
def owners(top: str) -> dict[str, str]:
    """Installed file -> the distribution that installed it, among the distributions that
    provide the top-level name `top` (reading every distribution's files took seconds)."""
    found: dict[str, str] = {}
    for name in providers().get(top, ()):
        owner = canonicalize_name(name)
        # Each installed copy of the name (one may be on the path twice): `import` may find any.
        for dist in distributions(name=name):
            for file in dist.files or ():
                found[os.path.normpath(dist.locate_file(file))] = owner
    return found


def distribution_of(module: str) -> str | None:
    """The distribution whose files hold `module` (a namespace package's part, too)."""
    top = module.partition(".")[0]
    while module:
        spec = importlib.util.find_spec(module)
        if spec is not None and spec.origin not in (None, "namespace", "built-in", "frozen"):
            return owners(top).get(os.path.normpath(spec.origin))
        module = module.rpartition(".")[0]  # a module of a namespace package: its package
    return None


def test_every_third_party_import_is_declared():
    names = {canonicalize_name(r.name) for r in declared()}
    undeclared = {
        f"{module} ({where}): {distribution_of(module)}"
        for module, where in imported().items()
        if distribution_of(module) not in names
    }
    assert not undeclared, sorted(undeclared)


def test_the_lock_pins_every_declared_dependency_within_its_bounds():
    text = (ROOT / "requirements.lock").read_text(encoding="utf-8")
    assert "uv pip compile pyproject.toml --all-extras" in text  # as the README says
    pins: dict[str, Version] = {}
    for line in text.splitlines():
        if line and not line.startswith(("#", " ")):
            name, _, version = line.partition(";")[0].strip().partition("==")
            pins[canonicalize_name(name)] = Version(version)
    for requirement in declared():
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{requirement} is not in requirements.lock"
        pinned = pins[name]
        assert requirement.specifier.contains(pinned, prereleases=True), (requirement, pinned)
