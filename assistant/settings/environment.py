"""Configuration from the environment and `.env`, validated once at start.

One `Settings` object is built at start and passed in; nothing else reads the environment. It
holds one group per concern (`groups.py`): `settings.slack`, `settings.model`,
`settings.answers`, `settings.persona`, `settings.tools`, `settings.storage`,
`settings.telemetry`. A variable is named by its environment name everywhere it is given
(`load_settings(mode, assistant_stream="off")`) or said (the start's one message).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar, get_type_hints

from pydantic import ValidationError, field_validator
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails
from pydantic_settings import NoDecode

from assistant.mcp.config import ServerConfig
from assistant.run.core.prompt import MIN_LOG_TOKENS
from assistant.settings.groups import (
    AnswerSettings,
    ModelSettings,
    PersonaSettings,
    SlackSettings,
    StoreSettings,
    TelemetrySettings,
    ToolSettings,
    Variables,
)
from assistant.settings.persona_file import read_personas
from assistant.settings.prices import PriceTable, parse_prices

Mode = Literal["socket", "http", "worker", "replay"]
G = TypeVar("G", bound=Variables)

# What each way of running cannot do without (by variable).
REQUIRED: dict[Mode, tuple[str, ...]] = {
    "socket": ("slack_bot_token", "slack_app_token", "openai_api_key"),
    "http": ("slack_bot_token", "slack_signing_secret", "openai_api_key"),
    "worker": ("slack_bot_token", "openai_api_key"),  # no events come to it: no Slack secret
    "replay": ("openai_api_key",),
}


class SettingsError(Exception):
    """Settings that are missing or wrong: every problem, one per line, no secret value."""


class UsageSettings(StoreSettings):
    """What `assistant usage` needs: the store, and what the models' tokens cost."""

    assistant_prices: Annotated[PriceTable | None, NoDecode] = None

    _prices = field_validator("assistant_prices", mode="before")(parse_prices)


class ChannelSettings(StoreSettings):
    """What `assistant channels` needs: the store, and the personas a channel may choose."""

    # Named personas a channel may choose (docs/configuration.md, "Configuring channels"): YAML or
    # JSON.
    assistant_personas_file: Path | None = None

    def personas(self) -> dict[str, str]:
        """The named personas of ASSISTANT_PERSONAS_FILE (none without it); ValueError saying
        what is wrong with the file."""
        if self.assistant_personas_file is None:
            return {}
        return read_personas(self.assistant_personas_file)


@dataclass(frozen=True, kw_only=True)
class Variable:
    """Where one environment variable is kept: `Settings`' group and the group's field."""

    group: str
    field: str
    info: FieldInfo


@dataclass(frozen=True, kw_only=True)
class Settings:
    """Every setting of the app, by concern (`assistant/settings/groups.py`)."""

    slack: SlackSettings
    model: ModelSettings
    answers: AnswerSettings
    persona: PersonaSettings
    tools: ToolSettings
    storage: StoreSettings
    telemetry: TelemetrySettings

    @staticmethod
    def variables() -> dict[str, Variable]:
        """Every variable the settings read, by its name in lower case (`slack_bot_token`)."""
        return dict(_variables())

    @classmethod
    def read(cls, *, _env_file: Path | str | None = ".env", **variables: Any) -> Settings:
        """The settings from the environment, `.env` (`_env_file`; None: none) and `variables`
        by their names in lower case, which come first; SettingsError listing every problem.
        The start's checks of the files and the mode are `load_settings`'."""
        settings, problems, _ = _read(_env_file, variables)
        if problems:
            raise SettingsError("\n".join(problems))
        return settings

    def value(self, variable: str) -> Any:
        """The value of one variable by its name in either case (`ASSISTANT_STREAM`)."""
        where = _variables()[variable.lower()]
        return getattr(getattr(self, where.group), where.field)


@cache
def _groups() -> dict[str, type[Variables]]:
    """Settings' groups by field name, each with its type."""
    return get_type_hints(Settings)


@cache
def _variables() -> dict[str, Variable]:
    found: dict[str, Variable] = {}
    for group, kind in _groups().items():
        for name, info in kind.model_fields.items():
            found[info.alias or name] = Variable(group=group, field=name, info=info)
    return found


def _read(
    env_file: Path | str | None, variables: dict[str, Any]
) -> tuple[Settings, list[str], set[str]]:
    """The settings, the problems found (one a line, by variable) and the variables found wrong;
    a wrong value is set aside for its default, so that the rest is checked too."""
    known = _variables()
    unknown = sorted(set(variables) - set(known))
    if unknown:
        raise TypeError(f"not a setting: {', '.join(unknown)}")
    problems: list[str] = []
    wrong: set[str] = set()

    def read(kind: type[G]) -> G:
        groups = _groups()
        given = {name: v for name, v in variables.items() if groups[known[name].group] is kind}
        try:
            return kind(_env_file=env_file, **given)
        except ValidationError as exc:
            defaults: dict[str, Any] = {}
            for error in exc.errors():
                name = str(error["loc"][0]) if error["loc"] else ""
                wrong.add(name)
                problems.append(_describe(error))
                if name in known:
                    defaults[name] = known[name].info.get_default(call_default_factory=True)
        # One message lists everything: with the wrong values set aside, see what is missing.
        try:
            return kind(_env_file=env_file, **{**given, **defaults})
        except ValidationError:
            raise SettingsError("\n".join(problems)) from None

    settings = Settings(
        slack=read(SlackSettings),
        model=read(ModelSettings),
        answers=read(AnswerSettings),
        persona=read(PersonaSettings),
        tools=read(ToolSettings),
        storage=read(StoreSettings),
        telemetry=read(TelemetrySettings),
    )
    return settings, problems, wrong


def _describe(error: ErrorDetails) -> str:
    """One settings problem by variable name; the message, never the value (it may be secret)."""
    name = "_".join(str(p) for p in error["loc"]).upper() or "settings"
    return f"{name}: {error['msg'].removeprefix('Value error, ')}"


def load_store_settings() -> StoreSettings:
    try:
        return StoreSettings()
    except ValidationError as exc:
        raise SettingsError("\n".join(_describe(e) for e in exc.errors())) from None


def load_channel_settings() -> ChannelSettings:
    try:
        return ChannelSettings()
    except ValidationError as exc:
        raise SettingsError("\n".join(_describe(e) for e in exc.errors())) from None


def load_usage_settings() -> UsageSettings:
    try:
        return UsageSettings()
    except ValidationError as exc:
        raise SettingsError("\n".join(_describe(e) for e in exc.errors())) from None


def load_settings(
    mode: Mode, *, _env_file: Path | str | None = ".env", **overrides: Any
) -> Settings:
    """Build the settings for `mode` (`overrides` by variable name in lower case, before the
    environment), or raise `SettingsError` listing every problem."""
    settings, problems, wrong = _read(_env_file, overrides)
    slack = settings.slack
    if bool(slack.client_id) != bool(slack.client_secret):
        problems.append("SLACK_CLIENT_ID and SLACK_CLIENT_SECRET: set both, or neither")
    if slack.oauth and slack.bot_token and mode in ("http", "worker"):
        problems.append("SLACK_BOT_TOKEN: not with SLACK_CLIENT_ID (each workspace has its own)")
    for variable in REQUIRED[mode]:
        if variable == "slack_bot_token" and slack.oauth and mode in ("http", "worker"):
            continue  # each workspace's token comes from its installation
        if variable not in wrong and not settings.value(variable):
            problems.append(f"{variable.upper()}: missing")
    try:
        settings.persona.instructions()  # ASSISTANT_PROMPT_FILE's first read, kept from here on
    except ValueError as exc:
        problems.append(f"ASSISTANT_PROMPT_FILE: {exc}")
    try:
        settings.persona.personas()
    except ValueError as exc:
        problems.append(f"ASSISTANT_PERSONAS_FILE: {exc}")
    try:
        problems += _sign_in_problems(settings, mode, settings.tools.mcp_servers())
    except ValueError as exc:
        problems += [f"ASSISTANT_MCP_FILE: {line}" for line in str(exc).splitlines()]
    problems += _budget_problems(settings.model)
    if problems:
        raise SettingsError("\n".join(problems))
    return settings


def _sign_in_problems(settings: Settings, mode: Mode, servers: list[ServerConfig]) -> list[str]:
    """What `auth: user` servers need: the HTTP app's callback (so not Socket Mode's `run`),
    the key that seals people's tokens and the base URL browsers reach the app at. An `auth:
    deployment` server needs the key and the URL (its client's redirect URI) too; the
    callback only while an admin signs in (`assistant mcp login`), so any mode serves it."""
    people = ", ".join(s.name for s in servers if s.per_person)
    names = ", ".join(s.name for s in servers if s.signs_in)
    if not names or mode == "replay":
        return []
    if mode == "socket" and people:
        return [
            f"ASSISTANT_MCP_FILE: {people}: auth: user needs the sign-in callback of the HTTP "
            "app: use `assistant serve` (Socket Mode serves no URL a browser can reach)"
        ]
    problems = []
    key = settings.tools.secret_key
    if key is None:
        problems.append(f"ASSISTANT_SECRET_KEY: missing (servers that sign in: {names})")
    else:
        from assistant.mcp.signin.sealing import Sealer

        try:
            Sealer(key.get_secret_value())
        except ValueError as exc:
            problems.append(str(exc))
    if settings.tools.public_url is None:
        problems.append(f"ASSISTANT_PUBLIC_URL: missing (servers that sign in: {names})")
    return problems


def _budget_problems(model: ModelSettings) -> list[str]:
    room = model.prompt_budget().tokens
    if room >= MIN_LOG_TOKENS:
        return []
    return [
        f"ASSISTANT_CONTEXT_TOKENS: {model.context_tokens} leaves {room} tokens for "
        f"the thread's log after ASSISTANT_ANSWER_TOKENS ({model.answer_tokens}), "
        f"the instructions and the tool schemas; at least {MIN_LOG_TOKENS} are needed"
    ]
