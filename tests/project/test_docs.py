"""The examples in docs/ are real: every `json` block parses, and each log, entry, tool call and
pruned prompt in them is what the code accepts (one-line ones byte for byte what it writes);
the shown outputs are the commands' own; every link to a section finds it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from pydantic import TypeAdapter

from context.entry import ENTRY_ADAPTER
from context.log import ContextLog
from context.prompt_pieces import omission_note
from context.render import render_log
from context.schema import log_json_schema
from context.toolcalls import AssistantContent
from context.validate import validate_log
from tests.cli import DATA, ROOT

DOCS = sorted((ROOT / "docs").glob("*.md"))
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
CONTENT_ADAPTER: TypeAdapter[Any] = TypeAdapter(AssistantContent)
SCHEMA = jsonschema.Draft202012Validator(log_json_schema())


def blocks(language: str) -> list[tuple[str, str]]:
    """(where, text) of every fenced block of `language` in the docs."""
    found = []
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            if match.group(1) == language:
                line = text.count("\n", 0, match.start()) + 1
                found.append((f"{path.name}:{line}", match.group(2)))
    return found


def compact(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def check_log(text: str) -> None:
    report = validate_log(text)
    assert report.problems == []
    assert list(SCHEMA.iter_errors(json.loads(text))) == []
    if "\n" not in text.strip():
        assert text.strip() == ContextLog(report.entries).prompt_text()


def check_entry(text: str, item: dict[str, Any]) -> None:
    entry = ENTRY_ADAPTER.validate_python(item)
    assert list(SCHEMA.iter_errors([item])) == []
    if "\n" not in text.strip():
        assert text.strip() == entry.canonical_json()


def check_prompt(items: list[Any]) -> None:
    """A pruned prompt: entries and omission notes that stand exactly for what is missing."""
    expected = 0
    for item in items:
        if "omitted" in item:
            first, last = item["omitted"]["from"], item["omitted"]["to"]
            assert first == expected and last >= first
            assert compact(item) == omission_note(first, last)
            expected = last + 1
        else:
            assert ENTRY_ADAPTER.validate_python(item).index == expected
            expected += 1


JSON_BLOCKS = blocks("json")


def test_the_docs_have_json_examples():
    assert {Path(where.split(":")[0]).name for where, _ in JSON_BLOCKS} >= {"log-format.md"}


@pytest.mark.parametrize(("where", "text"), JSON_BLOCKS, ids=[w for w, _ in JSON_BLOCKS])
def test_a_json_example_parses_and_validates(where, text):
    value = json.loads(text)
    if isinstance(value, list) and value and all(isinstance(i, dict) for i in value):
        if any("omitted" in item for item in value):
            check_prompt(value)
        elif all("index" in item for item in value):
            check_log(text)
    elif isinstance(value, dict):
        if "index" in value and "role" in value:
            check_entry(text, value)
        elif "toolCall" in value:
            call = CONTENT_ADAPTER.validate_python(value)
            if "\n" not in text.strip():
                assert text.strip() == compact(call.model_dump(mode="json", exclude_none=True))
        elif "omitted" in value:
            assert text.strip() == omission_note(value["omitted"]["from"], value["omitted"]["to"])


def test_the_worked_example_is_the_seed_file():
    seed = json.loads((ROOT / "examples" / "aya-lunch.json").read_bytes())
    assert any(json.loads(text) == seed for _, text in JSON_BLOCKS)


def test_the_shown_trace_and_validation_output_are_the_commands_own():
    texts = [text for _, text in blocks("text")]
    trace = render_log(validate_log((ROOT / "examples" / "aya-lunch.json").read_bytes()).entries)
    assert trace == (DATA / "aya-lunch.console.txt").read_text(encoding="utf-8")
    assert trace in texts
    name = "several-problems.json"
    report = validate_log((DATA / "broken" / name).read_bytes())
    output = [f"{name}: {p}" for p in report.problems] + [f"{name}: 4 problems"]
    assert "\n".join(output) + "\n" in texts


def anchors(path: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens."""
    headings = re.findall(r"^#+ (.+)$", FENCE.sub("", path.read_text(encoding="utf-8")), re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_every_link_to_a_section_finds_it(path):
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    for target, anchor in re.findall(r"\]\(([\w\-./]*?)#([\w\-]+)\)", text):
        linked = path.parent / target if target else path
        assert anchor in anchors(linked), f"{path.name}: {target}#{anchor}"


def test_the_readme_s_trace_is_the_renderer_s_own():
    trace = render_log(validate_log((ROOT / "examples" / "aya-lunch.json").read_bytes()).entries)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"```\n{trace}```\n" in readme
