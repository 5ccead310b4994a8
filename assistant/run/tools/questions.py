"""A question an MCP server asks the person a call is made for (MCP's elicitation;
docs/slack-features.md#questions-from-tools): what was asked, checked and bounded as a tool's
texts are; the Slack message and form that put it; the form's values checked against it; the
log's entries for the question and its answer (docs/log-format.md#questions-from-mcp-servers).

Everything a server sent is its data: redacted, without control characters, cut, and the form
takes only flat fields of the four kinds MCP's form mode allows (strings, numbers or integers,
booleans, enums); any other form is not shown, and the server is answered cancel."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal
from urllib.parse import urlsplit

from assistant.i18n.words import N_, Words

MAX_MESSAGE = 1_000  # characters of the server's message shown (a section takes 3,000)
MAX_TITLE = 100  # of a field's title (an input's label takes 2,000; a form stays short)
MAX_DESCRIPTION = 300  # of a field's description, shown as its hint
MAX_FIELDS = 20  # a form of more is not one to fill in in Slack
MAX_OPTIONS = 100  # a static_select shows at most 100
MAX_OPTION_LABEL = 75  # Slack's most for an option's text
MAX_TEXT = 3_000  # characters of a string the person types (a plain_text_input takes 3,000)
MAX_URL = 2_000  # a link button's URL may have 3,000; a longer one is not a link to show
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")

FILL_IN = "elicitation_fill_in"  # the message's buttons and the form (action and callback ids)
DECLINE = "elicitation_decline"
DONE = "elicitation_done"  # URL mode: the person says they did what the page asked
OPEN = "elicitation_open"  # URL mode: the link button (Slack sends a click on it too)
FORM = "elicitation_form"
ACTION_IDS = (FILL_IN, DECLINE, DONE, OPEN)
VALUE = "value"  # every input's action id: its block id names the field

Kind = Literal["string", "number", "integer", "boolean", "enum"]
Action = Literal["accept", "decline", "cancel"]


@dataclass(frozen=True)
class Field:
    """One field of a form, as shown: `name` is the server's key for its value."""

    name: str
    kind: Kind
    title: str
    description: str = ""
    required: bool = False
    options: tuple[str, ...] = ()  # an enum's values, in the server's order
    labels: tuple[str, ...] = ()  # what each option shows
    minimum: float | None = None
    maximum: float | None = None
    min_length: int | None = None
    max_length: int | None = None


@dataclass(frozen=True)
class Question:
    """What a server asked: a form of `fields`, or (mode "url") a page to open at `url`."""

    server: str
    tool: str
    mode: Literal["form", "url"]
    message: str
    fields: tuple[Field, ...] = field(default_factory=tuple)
    url: str | None = None

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False, separators=(",", ":"))

    @staticmethod
    def from_json(text: str) -> Question:
        data = json.loads(text)
        fields = tuple(
            Field(**{**f, "options": tuple(f["options"]), "labels": tuple(f["labels"])})
            for f in data.pop("fields")
        )
        return Question(**data, fields=fields)

    @property
    def host(self) -> str:
        return urlsplit(self.url or "").hostname or ""


def clean(text: object, most: int, plain: Callable[[str], str]) -> str:
    """A server's text as shown: a string, no control characters, redacted, cut to `most`."""
    if not isinstance(text, str):
        return ""
    text = " ".join(plain(_CONTROL.sub("", text)).split())
    return text if len(text) <= most else text[: most - 1] + "…"


def question_of(
    server: str, tool: str, params: dict[str, Any], plain: Callable[[str], str]
) -> Question | str:
    """The question of an elicitation request's params (as the SDK's model dumps them, by
    their protocol names), or why it cannot be shown."""
    message = clean(params.get("message"), MAX_MESSAGE, plain)
    if params.get("mode") == "url":
        url = params.get("url")
        why = url_refusal(url)
        if why is not None:
            return why
        if plain(str(url)) != url:  # the log and the button would show a secret
            return "its URL carries a secret"
        return Question(server, tool, "url", message, url=str(url))
    schema = params.get("requestedSchema")
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        return "its form is not an object of fields"
    properties = schema.get("properties")
    if not isinstance(properties, dict) or not properties:
        return "its form has no fields"
    if len(properties) > MAX_FIELDS:
        return f"its form has {len(properties)} fields, more than the {MAX_FIELDS} shown"
    required = schema.get("required")
    needed = set(required) if isinstance(required, list) else set()
    fields: list[Field] = []
    for name, prop in properties.items():
        made = _field(str(name), prop, str(name) in needed, plain)
        if isinstance(made, str):
            return made
        fields.append(made)
    return Question(server, tool, "form", message, tuple(fields))


def _field(name: str, prop: object, required: bool, plain: Callable[[str], str]) -> Field | str:
    if not isinstance(prop, dict) or len(name) > 200:
        return "a field of its form is not one a form shows"
    title = clean(prop.get("title"), MAX_TITLE, plain) or clean(name, MAX_TITLE, plain)
    base = Field(
        name=name,
        kind="string",
        title=title or "?",
        description=clean(prop.get("description"), MAX_DESCRIPTION, plain),
        required=required,
    )
    kind = prop.get("type")
    options, labels = _options(prop, plain)
    if options:
        if len(options) > MAX_OPTIONS:
            return f"its field {title!r} has more than {MAX_OPTIONS} choices"
        return replace(base, kind="enum", options=options, labels=labels)
    if kind == "number" or kind == "integer":
        low, high = _number(prop.get("minimum")), _number(prop.get("maximum"))
        return replace(base, kind=kind, minimum=low, maximum=high)
    if kind == "boolean":
        return replace(base, kind="boolean")
    if kind == "string":
        low_length, high_length = _count(prop.get("minLength")), _count(prop.get("maxLength"))
        return replace(base, min_length=low_length, max_length=high_length)
    return f"its field {title!r} is not a string, number, boolean or choice"


def _options(prop: dict[str, Any], plain: Callable[[str], str]) -> tuple[tuple[str, ...], ...]:
    """An enum's values and labels (`enum` with `enumNames`, or `oneOf` of `const` and
    `title`); none when it is not an enum of strings."""
    values: list[str] = []
    labels: list[str] = []
    if isinstance(prop.get("enum"), list):
        names = prop.get("enumNames")
        for at, value in enumerate(prop["enum"]):
            if not isinstance(value, str):
                return (), ()
            label = names[at] if isinstance(names, list) and at < len(names) else value
            values.append(value)
            labels.append(clean(label, MAX_OPTION_LABEL, plain) or "?")
    elif isinstance(prop.get("oneOf"), list):
        for choice in prop["oneOf"]:
            if not isinstance(choice, dict) or not isinstance(choice.get("const"), str):
                return (), ()
            values.append(choice["const"])
            label = choice.get("title", choice["const"])
            labels.append(clean(label, MAX_OPTION_LABEL, plain) or "?")
    return tuple(values), tuple(labels)


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def url_refusal(url: object) -> str | None:
    """Why a URL the server asks the person to open is not shown (None: it is shown): only an
    https URL with a host and no user name or password in it."""
    if (
        not isinstance(url, str)
        or len(url) > MAX_URL
        or _CONTROL.search(url)
        or any(c.isspace() for c in url)
    ):
        return "its URL is not one to show"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (raises on a port that is not a number)
    except ValueError:
        return "its URL is not one to show"
    if parts.scheme != "https" or not parts.hostname:
        return "its URL is not an https one"
    if parts.username is not None or parts.password is not None:
        return "its URL carries a user name or password"
    return None


REQUIRED = N_("Required.")
NOT_NUMBER = N_("Not a number.")
NOT_WHOLE = N_("Not a whole number.")
TOO_SMALL = N_("At least {least}.")
TOO_LARGE = N_("At most {most}.")
TOO_SHORT = N_("At least {least} characters.")
TOO_LONG = N_("At most {most} characters.")
NOT_A_CHOICE = N_("Not one of the choices.")


def checked(
    question: Question, values: dict[str, str | None], words: Words
) -> tuple[dict[str, str | int | float | bool], dict[str, str]]:
    """The form's values (by field name, as Slack sends them: text, or an option's value)
    as the content the server is answered with, and the errors by field name (none: valid)."""
    content: dict[str, str | int | float | bool] = {}
    errors: dict[str, str] = {}
    for item in question.fields:
        raw = values.get(item.name)
        raw = raw.strip() if isinstance(raw, str) and item.kind != "string" else raw
        if raw is None or raw == "":
            if item.required:
                errors[item.name] = words.gettext(REQUIRED)
            continue
        value, error = _value(item, raw, words)
        if error is not None:
            errors[item.name] = error
        elif value is not None:
            content[item.name] = value
    return content, errors


def _value(
    item: Field, raw: str, words: Words
) -> tuple[str | int | float | bool | None, str | None]:
    if item.kind == "boolean":
        if raw in ("true", "false"):
            return raw == "true", None
        return None, words.gettext(NOT_A_CHOICE)
    if item.kind == "enum":
        return (raw, None) if raw in item.options else (None, words.gettext(NOT_A_CHOICE))
    if item.kind == "string":
        if len(raw) > MAX_TEXT or (item.max_length is not None and len(raw) > item.max_length):
            most = min(MAX_TEXT, item.max_length or MAX_TEXT)
            return None, words.gettext(TOO_LONG, most=most)
        if item.min_length is not None and len(raw) < item.min_length:
            return None, words.gettext(TOO_SHORT, least=item.min_length)
        return raw, None
    try:
        number = float(raw)
    except ValueError:
        return None, words.gettext(NOT_NUMBER)
    if not math.isfinite(number):
        return None, words.gettext(NOT_NUMBER)
    if item.kind == "integer" and not number.is_integer():
        return None, words.gettext(NOT_WHOLE)
    if item.minimum is not None and number < item.minimum:
        return None, words.gettext(TOO_SMALL, least=f"{item.minimum:g}")
    if item.maximum is not None and number > item.maximum:
        return None, words.gettext(TOO_LARGE, most=f"{item.maximum:g}")
    return (int(number) if item.kind == "integer" else number), None


def fields_text(question: Question) -> str:
    """The fields asked, as the log's entry names them."""
    parts = []
    for item in question.fields:
        kind = item.kind if item.kind != "enum" else "one of " + "/".join(item.options)
        parts.append(f"{item.name} ({kind}{', required' if item.required else ''})")
    return ", ".join(parts)


def asked_text(question: Question, index: int, asker: str) -> str:
    """The log's entry for a question (docs/log-format.md#questions-from-mcp-servers)."""
    head = (
        f"Question from the MCP server {question.server} during {question.server}__"
        f"{question.tool} (entry {index}) to <@{asker}>: {question.message or '(no message)'}"
    )
    if question.mode == "url":
        return f"{head}\nTo open: {question.url}"
    return f"{head}\nFields: {fields_text(question)}"


def refused_text(server: str, tool: str, index: int, why: str) -> str:
    """The log's entry for a question that could not be shown (the server is answered cancel)."""
    return (
        f"Question from the MCP server {server} during {server}__{tool} (entry {index}) not "
        f"shown: {why}; answered cancel"
    )


def answer_text(
    index: int, action: Action, by: str | None, content: dict[str, Any] | None, why: str = ""
) -> str:
    """The log's entry for the answer to the question of entry `index`."""
    if action == "accept":
        said = f"accepted by <@{by}>"
        if content is not None:
            said += ": " + json.dumps(content, ensure_ascii=False, sort_keys=True)
    elif action == "decline":
        said = f"declined by <@{by}>"
    else:
        said = f"cancelled: {why}" if why else "cancelled"
    return f"Answer to the question of entry {index}: {said}"


def message_blocks(
    question: Question, elicitation_id: int, asker: str, words: Words
) -> tuple[str, list[dict[str, Any]]]:
    """The thread's message that puts the question to `asker`: Fill in and Decline, or (URL
    mode) a link button showing the page's host, Done and Decline."""
    value = str(elicitation_id)
    text = words.gettext(
        "<@{asker}>, the tool {tool} asks: {question}",
        asker=asker,
        tool=_escaped(f"{question.server}__{question.tool}"),
        question=_escaped(question.message) or "…",
    )
    if question.mode == "url":
        buttons: list[dict[str, Any]] = [
            _button(
                OPEN, words.gettext("Open {host}", host=question.host), value, url=question.url
            ),
            _button(DONE, words.gettext("Done"), value, style="primary"),
        ]
    else:
        buttons = [_button(FILL_IN, words.gettext("Fill in"), value, style="primary")]
    buttons.append(_button(DECLINE, words.gettext("Decline"), value))
    blocks: list[dict[str, Any]] = [
        {"type": "section", "text": {"type": "mrkdwn", "text": text, "verbatim": True}},
        {"type": "actions", "elements": buttons},
    ]
    return text, blocks


def answered_blocks(text: str) -> list[dict[str, Any]]:
    """The message once answered: what was asked and how it was answered, no buttons."""
    return [{"type": "section", "text": {"type": "mrkdwn", "text": text, "verbatim": True}}]


def _escaped(text: str) -> str:
    # A server's text shows as typed: no mention, link or channel-wide ping made from it.
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _button(
    action_id: str, label: str, value: str, style: str | None = None, url: str | None = None
) -> dict[str, Any]:
    button: dict[str, Any] = {
        "type": "button",
        "action_id": action_id,
        "text": {"type": "plain_text", "text": label[:75]},
        "value": value,
    }
    if style is not None:
        button["style"] = style
    if url is not None:
        button["url"] = url
    return button


def form_view(question: Question, elicitation_id: int, words: Words) -> dict[str, Any]:
    """The modal of a form question: one input per field (block id `f<n>`, the field's
    place), required ones marked by Slack."""
    blocks: list[dict[str, Any]] = []
    if question.message:
        blocks.append({"type": "section", "text": {"type": "plain_text", "text": question.message}})
    for at, item in enumerate(question.fields):
        block: dict[str, Any] = {
            "type": "input",
            "block_id": f"f{at}",
            "label": {"type": "plain_text", "text": item.title},
            "optional": not item.required,
            "element": _element(item, words),
        }
        if item.description:
            block["hint"] = {"type": "plain_text", "text": item.description}
        blocks.append(block)
    title = words.gettext("Answer {server}", server=question.server)
    return {
        "type": "modal",
        "callback_id": FORM,
        "private_metadata": str(elicitation_id),
        "title": {"type": "plain_text", "text": title if len(title) <= 24 else title[:23] + "…"},
        "submit": {"type": "plain_text", "text": words.gettext("Send")},
        "close": {"type": "plain_text", "text": words.gettext("Close")},
        "blocks": blocks,
    }


def _element(item: Field, words: Words) -> dict[str, Any]:
    if item.kind == "string":
        element: dict[str, Any] = {"type": "plain_text_input", "action_id": VALUE}
        most = min(MAX_TEXT, item.max_length or MAX_TEXT)
        element["max_length"] = max(most, 1)
        if item.min_length:
            element["min_length"] = min(item.min_length, most)
        return element
    if item.kind in ("number", "integer"):
        # Slack checks the kind and the bounds as typed; the submission is checked again.
        element = {
            "type": "number_input",
            "action_id": VALUE,
            "is_decimal_allowed": item.kind == "number",
        }
        if item.minimum is not None:
            element["min_value"] = f"{item.minimum:g}"
        if item.maximum is not None:
            element["max_value"] = f"{item.maximum:g}"
        return element
    if item.kind == "boolean":
        choices = [("true", words.gettext("Yes")), ("false", words.gettext("No"))]
    else:
        choices = list(zip(item.options, item.labels, strict=True))
    return {
        "type": "static_select",
        "action_id": VALUE,
        "options": [
            # An option's value has 150 characters at most: the server's value is kept only
            # when it fits, else its place stands for it.
            {"text": {"type": "plain_text", "text": label}, "value": _option_value(value, at)}
            for at, (value, label) in enumerate(choices)
        ],
    }


def _option_value(value: str, at: int) -> str:
    return value if 0 < len(value) <= 150 and not value.startswith("#") else f"#{at}"


def submitted_values(question: Question, state: dict[str, Any]) -> dict[str, str | None]:
    """The form's values by field name, from a view_submission's `state.values`; an option
    given by its place read back as its value."""
    values: dict[str, str | None] = {}
    for at, item in enumerate(question.fields):
        block = state.get(f"f{at}")
        element = block.get(VALUE) if isinstance(block, dict) else None
        if not isinstance(element, dict):
            values[item.name] = None
            continue
        if "selected_option" in element:
            option = element.get("selected_option")
            chosen = option.get("value") if isinstance(option, dict) else None
            values[item.name] = _chosen(item, chosen)
        else:
            typed = element.get("value")
            values[item.name] = typed if isinstance(typed, str) else None
    return values


def _chosen(item: Field, chosen: object) -> str | None:
    if not isinstance(chosen, str):
        return None
    if item.kind == "enum" and chosen.startswith("#") and chosen[1:].isdigit():
        at = int(chosen[1:])
        return item.options[at] if at < len(item.options) else "\x00"  # not a choice
    return chosen
