"""The fields of Slack's message events that the app uses, checked where the events come in.

Slack signs what it sends, but a signed event can still be odd: a field missing, a `ts` that
is not a Slack timestamp, `text` that is not a string, a file described in a shape nothing
expects (or with a URL that cannot even be parsed). Such an event must not end in an error:
Slack would get a 500, retry three times, and the message would be lost all the same. So what
cannot be recorded is acknowledged with one warning that says what is wrong and where (the
field and the event id, never the message's text), and a message with one odd part is
recorded without that part, its log saying so.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

log = logging.getLogger(__name__)

SLACK_TS = r"^\d{1,10}\.\d{1,6}$"
SlackTs = Annotated[str, Field(pattern=SLACK_TS)]
# Workspace, channel and user ids: C0123ABC, U0123ABC, T0123ABC, …
SlackId = Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]{1,64}$")]

TEXT_UNREADABLE = "The text of this message could not be read: its form from Slack was malformed."


def files_unreadable(count: int, whose: str = "this message") -> str:
    if count == 1:
        return f"A file of {whose} could not be read: its description from Slack was malformed."
    return (
        f"{count} files of {whose} could not be read: their descriptions from Slack were malformed."
    )


class _Fields(BaseModel):
    # Only what the app reads is checked; Slack adds fields over time. Strict: a number
    # where Slack sends a string is as odd as a missing field.
    model_config = ConfigDict(extra="ignore", strict=True)


class Envelope(_Fields):
    team_id: SlackId
    event_id: str | None = None


class MessageFields(_Fields):
    """A person's message (`message` or `app_mention`); `text` and `files` are checked on
    their own, since the message can be recorded without them."""

    channel: SlackId
    ts: SlackTs
    thread_ts: SlackTs | None = None
    user: SlackId


class PreviousMessage(_Fields):
    ts: SlackTs | None = None
    user: SlackId | None = None
    text: str | None = None
    thread_ts: SlackTs | None = None


class EditedMessage(_Fields):
    ts: SlackTs
    thread_ts: SlackTs | None = None
    user: SlackId | None = None
    text: str = ""


class EditFields(_Fields):
    """`message_changed`: the message as it is now, and as it was."""

    channel: SlackId
    message: EditedMessage
    previous_message: PreviousMessage = PreviousMessage()


class DeletionFields(_Fields):
    """`message_deleted`."""

    channel: SlackId
    deleted_ts: SlackTs
    previous_message: PreviousMessage = PreviousMessage()


class PanelContext(_Fields):
    """What the person was viewing when an assistant panel event was sent."""

    channel_id: SlackId | None = None
    team_id: SlackId | None = None
    enterprise_id: SlackId | None = None


class AssistantThread(_Fields):
    """An assistant panel event's `assistant_thread`: its ids name the thread's log, as a
    message's do (`assistant threads`, `show` and `export` address it by them). `context` is
    checked on its own: the event can be recorded without it."""

    channel_id: SlackId
    user_id: SlackId
    thread_ts: SlackTs


class PanelFields(_Fields):
    """`assistant_thread_started` and `assistant_thread_context_changed`."""

    assistant_thread: AssistantThread


class SessionTitleFields(_Fields):
    """`agent_session_title_changed`: a person renamed a thread's agent session."""

    channel: SlackId
    thread_ts: SlackTs
    user: SlackId
    title: Annotated[str, Field(min_length=1, max_length=200)]
    previous_title: str | None = None


class ShortcutMessage(_Fields):
    ts: SlackTs
    thread_ts: SlackTs | None = None


class ShortcutFields(_Fields):
    """`message_action`: a message shortcut used on a message (who, where, which message)."""

    team: dict[str, Any]
    user: dict[str, Any]
    channel: dict[str, Any]
    message: ShortcutMessage


class _Id(_Fields):
    id: SlackId


def shortcut_message(payload: dict[str, Any]) -> Checked | None:
    """A message shortcut's payload as the message it asks about: the message's ts, thread
    and text, its files, with the person who used the shortcut as its author. None (after
    one warning) when it cannot be recorded."""
    try:
        ShortcutFields.model_validate(payload)
        team, user, channel = (
            _Id.model_validate(payload[part]).id for part in ("team", "user", "channel")
        )
    except (ValidationError, KeyError) as exc:
        what = _what(exc) if isinstance(exc, ValidationError) else f"missing {exc}"
        log.warning("message_action %s not recorded: %s", payload.get("callback_id"), what)
        return None
    message = payload["message"]
    event = {
        "type": "message_action",
        "channel": channel,
        "ts": message["ts"],
        "user": user,
        # Who wrote the message, for the thread's copy of it (the entry's author is `user`).
        "author": message["user"] if isinstance(message.get("user"), str) else None,
        "text": message.get("text") if isinstance(message.get("text"), str) else "",
        "files": message.get("files"),
    }
    if isinstance(message.get("thread_ts"), str):
        event["thread_ts"] = message["thread_ts"]
    trigger = payload.get("trigger_id")
    event_id = f"shortcut:{trigger}" if isinstance(trigger, str) and trigger else None
    return person_message({"team_id": team, "event_id": event_id}, event)


class HomeOpenedFields(_Fields):
    """`app_home_opened`: who opened which tab of the app (`messages`: their DM with it)."""

    user: SlackId
    channel: SlackId
    tab: str


class ViewingContext(_Fields):
    # Each entity's `value` is read by its `type` (`assistant.intake.viewing`): Slack adds types.
    entities: list[dict[str, Any]] = []


class ContextChangedFields(_Fields):
    """`app_context_changed`: what the person, in their DM with the app, now views."""

    user: SlackId
    channel: SlackId
    context: ViewingContext


class ClickPlace(_Fields):
    """Where a click on a message's button was made, and by whom: the thread it rates and the
    person, named as a message's are."""

    team: SlackId
    channel: SlackId
    thread_ts: SlackTs
    user: SlackId


def _parses(url: str) -> str:
    parts = urlsplit(url)  # ValueError for e.g. an unclosed IPv6 host
    parts.port  # noqa: B018 (ValueError for a port that is not a port)
    return url


Url = Annotated[str, AfterValidator(_parses)]


class SlackFile(BaseModel):
    """A file as a message's `files` describes it: the fields `assistant.intake.media` reads."""

    model_config = ConfigDict(extra="allow")
    id: str = ""
    name: str | None = None
    title: str | None = None
    mimetype: str | None = None
    filetype: str | None = None
    subtype: str | None = None
    media_display_type: str | None = None
    size: Annotated[int, Field(ge=0)] | None = None
    url_private: Url | None = None
    url_private_download: Url | None = None


@dataclass(frozen=True)
class Checked:
    """An event whose fields the app uses are as expected: `event` is safe to read."""

    team: str
    event_id: str | None
    event: dict[str, Any]
    problems: list[str] = field(default_factory=list)  # for a system entry after it
    # Slack's `action_token` of the message (`assistant_thread.action_token`), for searching
    # Slack as its author; None: none, or not of a token's shape (the warning says so).
    action_token: str | None = field(default=None, repr=False)


# Slack's action tokens look like `10116779555154.10138525474272.9b39d433f1…`: no more is
# assumed than a short run of these characters.
_ACTION_TOKEN = re.compile(r"^[A-Za-z0-9._-]{1,256}$")


def action_token_of(event: dict[str, Any]) -> tuple[str | None, str | None]:
    """The message's action token (Slack puts it in `assistant_thread`, with the messages of
    DMs, the assistant panel and the channels of an app with AI features), and what is wrong
    with it, if anything (never its value)."""
    thread = event.get("assistant_thread")
    if thread is None:
        return None, None
    token = thread.get("action_token") if isinstance(thread, dict) else None
    if token is None and isinstance(thread, dict):
        return None, None
    if not isinstance(token, str) or not _ACTION_TOKEN.match(token):
        return None, "assistant_thread.action_token: not an action token"
    return token, None


def _what(exc: ValidationError, within: tuple[str | int, ...] = ()) -> str:
    """Which fields are wrong and how, without their values (they may be the message)."""
    return "; ".join(
        f"{'.'.join(str(part) for part in (*within, *error['loc'])) or 'event'}: {error['msg']}"
        for error in exc.errors(include_url=False, include_context=False, include_input=False)
    )


def _event_id(body: dict[str, Any]) -> str:
    event_id = body.get("event_id")
    return event_id if isinstance(event_id, str) else "(no event_id)"


def checked(body: dict[str, Any], event: dict[str, Any], fields: type[_Fields]) -> Checked | None:
    """`event` if the fields of it that the app uses are as `fields` says, else None (and one
    warning saying what is wrong: Slack is still acknowledged, and retrying cannot help)."""
    try:
        envelope = Envelope.model_validate(body)
        fields.model_validate(event)
    except ValidationError as exc:
        log.warning("%s event %s not recorded: %s", event.get("type"), _event_id(body), _what(exc))
        return None
    return Checked(envelope.team_id, envelope.event_id, event)


def person_message(body: dict[str, Any], event: dict[str, Any]) -> Checked | None:
    """A person's message as far as it can be read: None (after one warning) when it cannot
    be recorded at all; else with `text` a string and only the files that can be read, and
    a problem for the log for what was left out."""
    message = checked(body, event, MessageFields)
    if message is None:
        return None
    wrong: list[str] = []
    problems: list[str] = []
    text = event.get("text")
    if text is not None and not isinstance(text, str):
        wrong.append("text: not a string")
        problems.append(TEXT_UNREADABLE)
    files, odd_files = readable_files(event.get("files"))
    token, odd_token = action_token_of(event)
    if odd_token:
        wrong.append(odd_token)  # recorded without it: a search says it has none
    if odd_files:
        wrong += odd_files
        problems.append(files_unreadable(len(odd_files)))
    if wrong:
        log.warning(
            "%s event %s recorded without what is malformed: %s",
            event.get("type"),
            message.event_id,
            "; ".join(wrong),
        )
    safe = {**event, "text": text if isinstance(text, str) else "", "files": files}
    return Checked(message.team, message.event_id, safe, problems, token)


def panel_event(body: dict[str, Any], event: dict[str, Any]) -> Checked | None:
    """An assistant panel event as far as it can be read: None (after one warning) when it
    cannot be recorded; else with `assistant_thread.context` holding only the checked fields,
    or empty (after one warning) when they are malformed."""
    found = checked(body, event, PanelFields)
    if found is None:
        return None
    thread = dict(event["assistant_thread"])
    try:
        context = PanelContext.model_validate(thread.get("context") or {})
    except ValidationError as exc:
        log.warning(
            "%s event %s recorded without what is malformed: %s",
            event.get("type"),
            found.event_id,
            _what(exc, ("assistant_thread", "context")),
        )
        context = PanelContext()
    thread["context"] = context.model_dump(exclude_none=True)
    return Checked(found.team, found.event_id, {**event, "assistant_thread": thread})


def readable_files(files: object) -> tuple[list[dict[str, Any]], list[str]]:
    """The files described as `assistant.intake.media` expects, and what is wrong with the
    others."""
    if files is None:
        return [], []
    if not isinstance(files, list):
        return [], ["files: not a list"]
    good: list[dict[str, Any]] = []
    wrong: list[str] = []
    for at, file in enumerate(files):
        try:
            SlackFile.model_validate(file)
        except ValidationError as exc:
            wrong.append(_what(exc, ("files", at)))
        else:
            good.append(file)
    return good, wrong
