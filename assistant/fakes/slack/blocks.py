"""Slack's documented Block Kit limits on a view, for `views.publish` and `views.open`: what
real Slack refuses with `invalid_arguments` and, in `response_metadata.messages`, one
`[ERROR] … [json-pointer:/view/…]` line per problem.

The limits, from docs.slack.dev (reference/views, reference/block-kit): a view holds at most
100 blocks; `private_metadata` at most 3000 characters, `callback_id` and `external_id` 255; a
modal's `title`, `submit` and `close` 24. Any block: `block_id` 255. Header text 150;
section text 3000 (at least 1), its `fields` at most 10 of 2000 each; an actions block 25
elements, a context block 10; an input's `label` and `hint` 2000. Elements: `action_id`
255, placeholder 150; a button's text 75, `value` 2000, `url` 3000; a static select's
`options` at most 100 (or `option_groups` at most 100 of 100 options, labels 75), each
option's text 75 and `value` 150; a plain-text input's `max_length` between 1 and 3000
(`min_length` 0 to 3000), and the fake holds its `initial_value` to that maximum (a value
the person could not have typed).
"""

from __future__ import annotations

from typing import Any

MAX_BLOCKS = 100
MAX_INPUT = 3000

_VIEW_TEXT = {"private_metadata": 3000, "callback_id": 255, "external_id": 255}
_MODAL_TEXT = {"title": 24, "submit": 24, "close": 24}
_ELEMENT_TEXT = {"action_id": 255, "value": 2000, "url": 3000}


class Problems:
    """The `[ERROR]` lines of one view, each naming where (a JSON pointer)."""

    def __init__(self) -> None:
        self.messages: list[str] = []

    def add(self, what: str, where: str) -> None:
        self.messages.append(f"[ERROR] {what} [json-pointer:{where}]")

    def length(self, value: Any, most: int, where: str, least: int = 0) -> None:
        if not isinstance(value, str):
            self.add("must be a string", where)
        elif len(value) > most:
            self.add(f"must be less than {most + 1} characters", where)
        elif len(value) < least:
            self.add(f"must be more than {least - 1} characters", where)

    def items(self, value: Any, most: int, where: str) -> list[Any]:
        if not isinstance(value, list):
            self.add("must be an array", where)
            return []
        if len(value) > most:
            self.add(f"no more than {most} items allowed", where)
        return value

    def text(self, value: Any, most: int, where: str) -> None:
        """A text object: `{"type": …, "text": …}`, its text 1 to `most` characters."""
        if not isinstance(value, dict) or value.get("type") not in ("plain_text", "mrkdwn"):
            self.add("must be a text object", where)
            return
        self.length(value.get("text"), most, f"{where}/text", least=1)


def view_problems(view: dict[str, Any]) -> list[str]:
    """Every limit `view` breaks; none: Slack takes it."""
    problems = Problems()
    for name, most in _VIEW_TEXT.items():
        if name in view:
            problems.length(view[name], most, f"/view/{name}")
    if view.get("type") == "modal":
        for name, most in _MODAL_TEXT.items():
            if name in view or name == "title":
                problems.text(view.get(name), most, f"/view/{name}")
    blocks = problems.items(view.get("blocks"), MAX_BLOCKS, "/view/blocks")
    for n, block in enumerate(blocks):
        _block(problems, block, f"/view/blocks/{n}")
    return problems.messages


def _block(problems: Problems, block: Any, where: str) -> None:
    if not isinstance(block, dict):
        problems.add("must be an object", where)
        return
    if "block_id" in block:
        problems.length(block["block_id"], 255, f"{where}/block_id", least=1)
    kind = block.get("type")
    if kind == "header":
        problems.text(block.get("text"), 150, f"{where}/text")
    elif kind == "section":
        if "text" in block or "fields" not in block:
            problems.text(block.get("text"), 3000, f"{where}/text")
        for n, field in enumerate(problems.items(block.get("fields", []), 10, f"{where}/fields")):
            problems.text(field, 2000, f"{where}/fields/{n}")
        if "accessory" in block:
            _element(problems, block["accessory"], f"{where}/accessory")
    elif kind in ("actions", "context"):
        most = 25 if kind == "actions" else 10
        for n, element in enumerate(problems.items(block.get("elements"), most, where)):
            if kind == "actions":
                _element(problems, element, f"{where}/elements/{n}")
            else:
                problems.text(element, 3000, f"{where}/elements/{n}")
    elif kind == "input":
        problems.text(block.get("label"), 2000, f"{where}/label")
        if "hint" in block:
            problems.text(block["hint"], 2000, f"{where}/hint")
        _element(problems, block.get("element"), f"{where}/element")


def _element(problems: Problems, element: Any, where: str) -> None:
    if not isinstance(element, dict):
        problems.add("must be an object", where)
        return
    for name, most in _ELEMENT_TEXT.items():
        if name in element:
            problems.length(element[name], most, f"{where}/{name}")
    if "placeholder" in element:
        problems.text(element["placeholder"], 150, f"{where}/placeholder")
    kind = element.get("type")
    if kind == "button":
        problems.text(element.get("text"), 75, f"{where}/text")
    elif kind == "static_select":
        _options(problems, element, where)
    elif kind == "plain_text_input":
        most = element.get("max_length", MAX_INPUT)
        if not isinstance(most, int) or not 1 <= most <= MAX_INPUT:
            problems.add(f"must be between 1 and {MAX_INPUT}", f"{where}/max_length")
            most = MAX_INPUT
        least = element.get("min_length", 0)
        if not isinstance(least, int) or not 0 <= least <= MAX_INPUT:
            problems.add(f"must be between 0 and {MAX_INPUT}", f"{where}/min_length")
        if "initial_value" in element:
            problems.length(element["initial_value"], most, f"{where}/initial_value")


def _options(problems: Problems, element: dict[str, Any], where: str) -> None:
    if "option_groups" in element:
        groups = problems.items(element["option_groups"], 100, f"{where}/option_groups")
        for g, group in enumerate(groups):
            at = f"{where}/option_groups/{g}"
            if not isinstance(group, dict):
                problems.add("must be an object", at)
                continue
            problems.text(group.get("label"), 75, f"{at}/label")
            _option_list(problems, group.get("options"), f"{at}/options")
    else:
        _option_list(problems, element.get("options"), f"{where}/options")


def _option_list(problems: Problems, options: Any, where: str) -> None:
    for n, option in enumerate(problems.items(options, 100, where)):
        if not isinstance(option, dict):
            problems.add("must be an object", f"{where}/{n}")
            continue
        problems.text(option.get("text"), 75, f"{where}/{n}/text")
        problems.length(option.get("value"), 150, f"{where}/{n}/value", least=1)
