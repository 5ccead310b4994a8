"""Configuration from the environment and `.env`, validated once at start.

One `Settings` object is built at start and passed in; nothing else reads the environment.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    Field,
    PrivateAttr,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import ErrorDetails
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from assistant.i18n.languages import catalog_named
from assistant.i18n.words import ENGLISH, LOCALES, Words
from assistant.mcp.config import ServerConfig
from assistant.model.options import ModelOptions, ToolMode, Wanted
from assistant.run.channels.channel_rules import SearchDefault
from assistant.run.core.post_limits import PostCaps
from assistant.run.core.prompt import MIN_LOG_TOKENS, PromptBudget
from assistant.run.tools.server_tools import ServerCaps
from assistant.settings.mcp_file import read_mcp_file
from assistant.settings.panel import (
    DEFAULT_GREETING,
    DEFAULT_LOADING_MESSAGES,
    DEFAULT_PROMPTS,
    SuggestedPrompt,
    parse_loading_messages,
    parse_prompts,
)
from assistant.settings.persona_file import PromptFile, read_personas
from assistant.settings.prices import PriceTable, parse_prices
from context.channels import SearchChannelType
from context.storage import DEFAULT_URL, database_url
from context.trace import TraceKind

Mode = Literal["socket", "http", "worker", "replay"]

DEFAULT_PROMPT = (
    "You're a helpful AI assistant named {name}. You help the people of this Slack workspace "
    "with their questions and their work. Be concise and friendly; answer in the language "
    "you were asked in."
)

# What each way of running cannot do without.
REQUIRED: dict[Mode, tuple[str, ...]] = {
    "socket": ("slack_bot_token", "slack_app_token", "openai_api_key"),
    "http": ("slack_bot_token", "slack_signing_secret", "openai_api_key"),
    "worker": ("slack_bot_token", "openai_api_key"),  # no events come to it: no Slack secret
    "replay": ("openai_api_key",),
}

_CAPS = PostCaps()

# The prefix of each Slack token: a token pasted into the wrong variable is named at start,
# before Slack is asked (and before it answers with a less helpful `not_allowed_token_type`).
TOKEN_PREFIXES = {
    "slack_bot_token": ("xoxb-", "a bot token (OAuth & Permissions → Bot User OAuth Token)"),
    "slack_app_token": ("xapp-", "an app-level token (Basic Information → App-Level Tokens)"),
}


class SettingsError(Exception):
    """Settings that are missing or wrong: every problem, one per line, no secret value."""


class StoreSettings(BaseSettings):
    """What the offline commands need: only where the logs are."""

    # A blank `NAME=` (as .env.example leaves the secrets) is unset, not an empty value: an
    # empty SLACK_BOT_TOKEN beside SLACK_CLIENT_ID would otherwise be taken for a token.
    model_config = SettingsConfigDict(env_file=".env", extra="ignore", env_ignore_empty=True)

    database_url: str = DEFAULT_URL

    @field_validator("database_url")
    @classmethod
    def _supported_database(cls, value: str) -> str:
        database_url(value)  # raises ValueError saying what is wrong, password hidden
        return value or DEFAULT_URL


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


class Settings(ChannelSettings):
    slack_bot_token: SecretStr | None = None
    slack_app_token: SecretStr | None = None
    slack_signing_secret: SecretStr | None = None
    slack_api_url: str = "https://slack.com/api/"
    # OAuth installs to many workspaces (docs/slack-setup.md, "Distributing the app"), for serve and
    # workers.
    slack_client_id: str | None = None
    slack_client_secret: SecretStr | None = None
    slack_state_secret: SecretStr | None = None  # not used: `serve` says why, once

    openai_api_key: SecretStr | None = None
    openai_base_url: str | None = None
    openai_timeout: float = Field(default=60.0, gt=0)
    openai_max_retries: int = Field(default=2, ge=0, le=10)

    assistant_model: str = "gpt-4o-mini"
    assistant_name: str = "Aya"
    assistant_prompt: str | None = None
    assistant_prompt_file: Path | None = None
    assistant_max_steps: int = Field(default=8, ge=1, le=100)
    assistant_max_posts_per_reply: int = Field(default=_CAPS.posts_per_reply, ge=1, le=100)
    assistant_max_tool_calls_per_reply: int = Field(default=_CAPS.calls_per_reply, ge=1, le=100)
    assistant_max_messages_per_run: int = Field(default=_CAPS.messages_per_run, ge=1, le=1000)
    assistant_max_post_chars_per_run: int = Field(
        default=_CAPS.chars_per_run, ge=100, le=10_000_000
    )
    assistant_max_mentions_per_message: int = Field(default=_CAPS.people_per_message, ge=0, le=100)
    assistant_context_tokens: int = Field(default=128_000, ge=1_000)
    assistant_answer_tokens: int = Field(default=4_000, ge=100)
    assistant_run_lease_seconds: float = Field(default=30.0, ge=1.0, le=3600.0)
    # How long a request waits for Slack to come back (assistant/run/core/slack_outage.py);
    # 0: not
    # at all.
    assistant_slack_outage_seconds: float = Field(default=900.0, ge=0.0, le=86400.0)
    assistant_max_images: int = Field(default=4, ge=0, le=50)
    assistant_max_image_bytes: int = Field(default=5 * 1024 * 1024, ge=1024)
    assistant_max_prompt_image_bytes: int = Field(default=12 * 1024 * 1024, ge=1024)
    assistant_transcription_model: str = "whisper-1"
    assistant_stream: Literal["auto", "off"] = "auto"
    assistant_tool_mode: ToolMode = "auto"
    # `serve` and `run` check the model server at start (`assistant check`'s summary).
    assistant_model_check: Literal["on", "off"] = "on"
    assistant_answer_followups: bool = True
    assistant_answer_bots: bool = False
    # Slack's search as a tool (searchSlack), where a channel's settings do not say: off unless
    # turned on, and the conversation types it covers (comma-separated).
    assistant_slack_search: bool = False
    assistant_slack_search_channel_types: Annotated[
        tuple[SearchChannelType, ...], NoDecode, Field(min_length=1)
    ] = ("public_channel",)
    # Another bot's messages one thread takes (assistant/intake/bot_exchanges.py).
    assistant_max_bot_exchanges_per_thread: int = Field(default=5, ge=1, le=1000)
    # The console trace: `text` for people, `json` lines for log collectors, `off`.
    assistant_trace: TraceKind = "text"
    # The assistant panel (assistant.settings.panel): read as written, not as pydantic-settings
    # decodes lists, so that a bad value is one clear problem like any other.
    assistant_greeting: str | None = None
    assistant_suggested_prompts: Annotated[tuple[SuggestedPrompt, ...], NoDecode] = DEFAULT_PROMPTS
    assistant_loading_messages: Annotated[tuple[str, ...], NoDecode] = DEFAULT_LOADING_MESSAGES
    # The language of the bot's own words for people whose Slack language has no catalog
    # (assistant/i18n/): one of LOCALES, in either spelling (pt_BR, pt-BR).
    assistant_locale: str = "en"

    # MCP servers (docs/configuration.md#mcp-servers): the file, each call's deadline, the calls
    # of one run, how much of one result is kept, how much of one message is read at all.
    assistant_mcp_file: Path | None = None
    assistant_mcp_call_seconds: float = Field(default=30.0, gt=0, le=600)
    assistant_max_mcp_calls_per_run: int = Field(default=20, ge=0, le=1000)
    assistant_max_mcp_result_chars: int = Field(default=20_000, ge=100, le=1_000_000)
    assistant_max_mcp_result_bytes: int = Field(default=4_000_000, ge=10_000, le=1_000_000_000)
    # The tools one model request carries, the built-ins among them (OpenAI's Chat Completions
    # takes at most 128 functions).
    assistant_max_tools_per_request: int = Field(default=128, ge=8, le=10_000)
    # How long a call that needs a person's approval waits for it (docs/configuration.md).
    assistant_approval_seconds: float = Field(default=900.0, gt=0, le=7 * 24 * 3600)

    port: int = Field(default=3000, ge=1, le=65535)

    # ASSISTANT_PROMPT_FILE's last good text is kept with the settings, built once.
    _prompt_file: PromptFile | None = PrivateAttr(default=None)
    _mcp_servers: list[ServerConfig] | None = PrivateAttr(default=None)

    def model_post_init(self, context: Any, /) -> None:
        if self.assistant_prompt_file is not None:
            self._prompt_file = PromptFile(self.assistant_prompt_file)

    def mcp_servers(self) -> list[ServerConfig]:
        """The servers of ASSISTANT_MCP_FILE (none without it), read once; ValueError naming
        every problem of the file, one a line."""
        if self.assistant_mcp_file is None:
            return []
        if self._mcp_servers is None:
            self._mcp_servers = read_mcp_file(self.assistant_mcp_file)
        return self._mcp_servers

    @field_validator("slack_bot_token", "slack_app_token")
    @classmethod
    def _token_shape(cls, value: SecretStr | None, info: ValidationInfo) -> SecretStr | None:
        assert info.field_name is not None
        prefix, kind = TOKEN_PREFIXES[info.field_name]
        if (
            value is not None
            and value.get_secret_value()
            and not (value.get_secret_value().startswith(prefix))
        ):
            raise ValueError(f"not {kind}: it must start with {prefix}")
        return value

    @field_validator("assistant_locale")
    @classmethod
    def _known_locale(cls, value: str) -> str:
        # `pt-BR` as Slack and BCP 47 write it, `pt_BR` as gettext does: the same catalog.
        catalog = catalog_named(value)
        if catalog is None:
            raise ValueError(f"no catalog of {value[:20]!r}: one of {', '.join(LOCALES)}")
        return catalog

    @model_validator(mode="after")
    def _one_prompt_source(self) -> Settings:
        if self.assistant_prompt and self.assistant_prompt_file:
            raise ValueError("set ASSISTANT_PROMPT or ASSISTANT_PROMPT_FILE, not both")
        return self

    @field_validator("assistant_slack_search_channel_types", mode="before")
    @classmethod
    def _comma_separated(cls, value: Any) -> Any:
        if isinstance(value, str):
            return tuple(dict.fromkeys(p.strip() for p in value.split(",") if p.strip()))
        return value

    _suggested_prompts = field_validator("assistant_suggested_prompts", mode="before")(
        parse_prompts
    )
    _loading_messages = field_validator("assistant_loading_messages", mode="before")(
        parse_loading_messages
    )

    def greeting(self, words: Words = ENGLISH) -> str:
        """What the panel says when a person opens it (ASSISTANT_GREETING; the default in
        `words`' language)."""
        if self.assistant_greeting:
            return self.assistant_greeting
        return words.gettext(DEFAULT_GREETING, name=self.assistant_name)

    def suggested_prompts(self, words: Words = ENGLISH) -> tuple[SuggestedPrompt, ...]:
        """ASSISTANT_SUGGESTED_PROMPTS as set, or the default ones in `words`' language."""
        if "assistant_suggested_prompts" in self.model_fields_set:
            return self.assistant_suggested_prompts
        return tuple(
            SuggestedPrompt(title=words.gettext(p.title), message=words.gettext(p.message))
            for p in DEFAULT_PROMPTS
        )

    def loading_messages(self, words: Words = ENGLISH) -> tuple[str, ...]:
        """ASSISTANT_LOADING_MESSAGES as set, or the default ones in `words`' language."""
        if "assistant_loading_messages" in self.model_fields_set:
            return self.assistant_loading_messages
        return tuple(words.gettext(message) for message in DEFAULT_LOADING_MESSAGES)

    def instructions(self) -> str:
        """Entry 0 of every new thread: the persona (ASSISTANT_PROMPT_FILE's, as
        `PromptFile.text` reads it)."""
        if self._prompt_file is not None:
            return self._prompt_file.text()
        if self.assistant_prompt:
            return self.assistant_prompt
        return DEFAULT_PROMPT.format(name=self.assistant_name)

    def prompt_budget(self) -> PromptBudget:
        """What the log may take of each prompt (ASSISTANT_CONTEXT_TOKENS and
        ASSISTANT_ANSWER_TOKENS, for ASSISTANT_MODEL's tokenizer)."""
        return PromptBudget.for_window(
            self.assistant_model, self.assistant_context_tokens, self.assistant_answer_tokens
        )

    @property
    def oauth(self) -> bool:
        """Installed to many workspaces through OAuth (SLACK_CLIENT_ID and _SECRET)."""
        return bool(self.slack_client_id and self.slack_client_secret)

    @property
    def slack_api_base(self) -> str:
        """slack-sdk wants the base URL with its trailing slash."""
        return self.slack_api_url.rstrip("/") + "/"

    def model_options(self) -> ModelOptions:
        """What the model client is built from (`assistant.model.client`)."""
        assert self.openai_api_key is not None
        return ModelOptions(
            api_key=self.openai_api_key.get_secret_value(),
            base_url=self.openai_base_url,
            timeout=self.openai_timeout,
            max_retries=self.openai_max_retries,
            model=self.assistant_model,
            transcription_model=self.assistant_transcription_model,
            answer_tokens=self.assistant_answer_tokens,
            tool_mode=self.assistant_tool_mode,
            answer_tokens_set=self.answer_tokens_set,
        )

    @property
    def answer_tokens_set(self) -> bool:
        """Whether ASSISTANT_ANSWER_TOKENS was set (else a cap is learned from the server)."""
        return "assistant_answer_tokens" in self.model_fields_set

    def model_wanted(self) -> Wanted:
        """What the settings ask of the model server (`assistant check`)."""
        return Wanted(
            context_tokens=self.assistant_context_tokens,
            answer_tokens=self.assistant_answer_tokens,
            stream=self.assistant_stream == "auto",
            images=self.assistant_max_images > 0,
            tool_mode=self.assistant_tool_mode,
            fixed_tokens=self.prompt_budget().fixed,
            answer_tokens_set=self.answer_tokens_set,
        )

    def server_caps(self) -> ServerCaps:
        """What a run may do with the MCP servers' tools (ASSISTANT_MAX_MCP_CALLS_PER_RUN, …)."""
        return ServerCaps(
            self.assistant_max_mcp_calls_per_run,
            self.assistant_max_mcp_result_chars,
            self.assistant_max_tools_per_request,
        )

    def slack_search(self) -> SearchDefault:
        """Slack search where a channel's settings do not say (ASSISTANT_SLACK_SEARCH…)."""
        return SearchDefault(self.assistant_slack_search, self.assistant_slack_search_channel_types)

    def post_caps(self) -> PostCaps:
        """What one run may post (see `assistant.run.core.post_limits`)."""
        return PostCaps(
            self.assistant_max_posts_per_reply,
            self.assistant_max_messages_per_run,
            self.assistant_max_post_chars_per_run,
            self.assistant_max_mentions_per_message,
            self.assistant_max_tool_calls_per_reply,
        )


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


def load_settings(mode: Mode, **overrides: Any) -> Settings:
    """Build the settings for `mode`, or raise `SettingsError` listing every problem."""
    problems: list[str] = []
    wrong: set[str] = set()
    try:
        settings = Settings(**overrides)
    except ValidationError as exc:
        defaults: dict[str, Any] = {}
        for error in exc.errors():
            wrong.add(str(error["loc"][0]) if error["loc"] else "")
            problems.append(_describe(error))
            info = Settings.model_fields.get(str(error["loc"][0])) if error["loc"] else None
            if info is not None:
                defaults[str(error["loc"][0])] = info.get_default(call_default_factory=True)
        # One message lists everything: with the wrong values set aside, see what is missing.
        try:
            settings = Settings(**{**overrides, **defaults})
        except ValidationError:
            raise SettingsError("\n".join(problems)) from None
    if bool(settings.slack_client_id) != bool(settings.slack_client_secret):
        problems.append("SLACK_CLIENT_ID and SLACK_CLIENT_SECRET: set both, or neither")
    if settings.oauth and settings.slack_bot_token and mode in ("http", "worker"):
        problems.append("SLACK_BOT_TOKEN: not with SLACK_CLIENT_ID (each workspace has its own)")
    for field in REQUIRED[mode]:
        if field == "slack_bot_token" and settings.oauth and mode in ("http", "worker"):
            continue  # each workspace's token comes from its installation
        if field not in wrong and not getattr(settings, field):
            problems.append(f"{field.upper()}: missing")
    try:
        settings.instructions()  # the first read of ASSISTANT_PROMPT_FILE, kept from here on
    except ValueError as exc:
        problems.append(f"ASSISTANT_PROMPT_FILE: {exc}")
    try:
        settings.personas()
    except ValueError as exc:
        problems.append(f"ASSISTANT_PERSONAS_FILE: {exc}")
    try:
        settings.mcp_servers()
    except ValueError as exc:
        problems += [f"ASSISTANT_MCP_FILE: {line}" for line in str(exc).splitlines()]
    problems += _budget_problems(settings)
    if problems:
        raise SettingsError("\n".join(problems))
    return settings


def _budget_problems(settings: Settings) -> list[str]:
    room = settings.prompt_budget().tokens
    if room >= MIN_LOG_TOKENS:
        return []
    return [
        f"ASSISTANT_CONTEXT_TOKENS: {settings.assistant_context_tokens} leaves {room} tokens for "
        f"the thread's log after ASSISTANT_ANSWER_TOKENS ({settings.assistant_answer_tokens}), "
        f"the instructions and the tool schemas; at least {MIN_LOG_TOKENS} are needed"
    ]
