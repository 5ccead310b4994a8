"""docs/examples/eval-workflow.yml, the CI example of docs/evaluation.md: a workflow that
parses, whose `assistant eval` command the command's own parser takes."""

from __future__ import annotations

import shlex
from pathlib import Path

import yaml

from assistant.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / "docs" / "examples" / "eval-workflow.yml"


def eval_commands() -> list[list[str]]:
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    steps = [step for job in workflow["jobs"].values() for step in job["steps"]]
    commands = [shlex.split(step["run"]) for step in steps if "run" in step]
    return [words for words in commands if words[:2] == ["assistant", "eval"]]


def test_the_example_workflow_parses_and_names_real_flags():
    commands = eval_commands()
    assert len(commands) == 1
    words = commands[0]
    words = words[: words.index(">")] if ">" in words else words  # the shell's redirection
    parser = build_parser()
    args = parser.parse_args(words[1:])  # argparse exits on a flag it does not know
    assert (args.min_pass, args.trials, args.yes) == (0.9, 3, True)
    assert args.inputs == ["evals/release"] and args.report == "eval.md"


def test_the_docs_show_the_example():
    text = (ROOT / "docs" / "evaluation.md").read_text(encoding="utf-8")
    assert "examples/eval-workflow.yml" in text


def test_the_readme_shows_eval_on_the_demo_in_two_commands():
    """The commands `test_the_demo_thread_is_a_ready_eval_set` runs."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "```sh\nassistant demo\nassistant eval --all --demo-model --min-pass 1\n```" in text
