"""Every code name the docs cite in backticks exists: a path in the repository, a file named
alone, a module, a class, function, method, constant or field of ours. The docs are how a
newcomer finds their way ("where things live"); a name that was renamed away sends them
nowhere, and nothing else would notice."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

from tests.cli import ROOT

DOCS = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]
FENCE = re.compile(r"^```.*?^```$", re.MULTILINE | re.DOTALL)
TICKED = re.compile(r"`([^`\n]+)`")
SOURCES = ("assistant", "context", "bench", "tests", "scripts", "deploy")
PATH = re.compile(r"^(?:assistant|context|tests|bench|scripts|deploy|examples|docs)/[\w./\-]*$")
FILE = re.compile(r"^[\w\-]+\.(?:py|md|json|yml|yaml|toml|po)$")
NAME = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*(?:\(\))?$")
# CamelCase, dotted, _private, ALL_CAPS or called: ours, or a module's. A plain snake_case word
# is as often Slack's, PostgreSQL's or a JSON field's, and is not checked.
CODE_LIKE = re.compile(r"^_|[a-z][A-Z]|^[A-Z][a-z]|\.|^[A-Z][A-Z0-9]*_[A-Z0-9_]+$|\(\)$")
OTHERS_VARIABLES = ("OTEL_", "OLLAMA_")  # OpenTelemetry's SDK's and Ollama's own

# Named in the docs on purpose though not ours: a placeholder of a recipe, a file the
# operator writes, the standard library's sqlite3 method, Slack's mrkdwn italics, files the
# app or a tool writes, a registry's host, a key of Slack's app manifest.
NOT_OURS = {
    "docker.io",
    "features.assistant_view",
    "assistant/run/tools/your_tool.py",
    "deploy/.env",
    "Connection.backup",
    "_italics_",
    "assistant.db",
    "assistant.pot",
}


@cache
def source_text() -> str:
    texts = []
    for folder in SOURCES:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in {".py", ".yml", ".yaml", ".po", ".mako", ".env"} and path != Path(
                __file__
            ):
                texts.append(path.read_text(encoding="utf-8"))
    for name in ("pyproject.toml", ".env.example", "Dockerfile", "Procfile"):
        texts.append((ROOT / name).read_text(encoding="utf-8"))
    return "\n".join(texts)


@cache
def file_names() -> frozenset[str]:
    names = set()
    for path in ROOT.rglob("*"):
        if not {".git", ".venv", "node_modules"} & set(path.parts):
            names.add(path.name)
    return frozenset(names)


@cache
def defined_names() -> frozenset[str]:
    """Names the code defines: classes, functions, assignments, fields and keyword parameters."""
    text = source_text()
    found = set(re.findall(r"^\s*(?:async\s+def|def|class)\s+(\w+)", text, re.MULTILINE))
    found |= set(re.findall(r"^\s*(\w+)\s*(?::[^=\n]+)?=", text, re.MULTILINE))
    found |= set(re.findall(r"^\s+(\w+)\s*:", text, re.MULTILINE))
    found |= set(re.findall(r"\bself\.(\w+)\s*[:=]", text))
    found |= {name.removesuffix(".py") for name in file_names() if name.endswith(".py")}
    return frozenset(found)


def missing(name: str) -> bool:
    """Whether a ticked name is code-like and names nothing in the repository."""
    if name in NOT_OURS or name in file_names():
        return False
    if PATH.match(name):
        return not (ROOT / name.split("::")[0].rstrip("/")).exists()
    if FILE.match(name):
        # a file of the repository, or one the code writes
        return name not in file_names() and f'"{name}"' not in source_text()
    if not NAME.match(name) or not CODE_LIKE.search(name):
        return False  # a plain word, a command line, a value: not a name of the code
    name = name.removesuffix("()")
    if name.startswith(OTHERS_VARIABLES):
        return False
    if name.startswith("ASSISTANT_") and name[len("ASSISTANT_") :].lower() in defined_names():
        return False  # a setting: its Settings field
    if name.startswith(("assistant.", "context.", "bench.", "tests.")):
        # a module, a module's attribute, or a name we send (a Slack method, a metric)
        as_path = ROOT / name.replace(".", "/")
        parent = as_path.parent.with_suffix(".py")
        return not (
            as_path.with_suffix(".py").exists()
            or as_path.is_dir()
            or parent.exists()
            or f'"{name}"' in source_text()
        )
    # defined by us part by part, or written in the code as it is (an imported class, a Slack
    # method or a tool's name in a string, an attribute path)
    return not (
        all(part in defined_names() for part in name.split("."))
        or re.search(rf"(?<![\w.]){re.escape(name)}(?![\w])", source_text())
    )


def cited(path: Path) -> list[str]:
    return sorted({m.group(1).strip() for m in TICKED.finditer(FENCE.sub("", path.read_text()))})


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_code_name_a_doc_cites_exists(doc: Path) -> None:
    assert [name for name in cited(doc) if missing(name)] == []


@pytest.mark.parametrize(
    "name",
    [
        "assistant/run/loop/nowhere.py",
        "nowhere_pacing.py",
        "_finish_refused",
        "Recorder.renamed_away",
    ],
)
def test_a_name_that_was_renamed_away_is_found(name: str) -> None:
    assert missing(name)


@pytest.mark.parametrize(
    "name",
    ["assistant/run/loop/agent.py", "pacing.py", "Recorder.record", "assistant.threads.setStatus"],
)
def test_a_name_that_exists_is_not_reported(name: str) -> None:
    assert not missing(name)
