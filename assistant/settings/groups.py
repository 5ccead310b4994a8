"""The settings by concern: one group each for Slack, the model, the answers and their caps, the
persona, the tools, the storage and the telemetry (`Settings` in `environment.py` holds one of
each). Every field is read from the environment variable it always was: its `alias` is the
variable's name in lower case (pydantic-settings matches it in any case), so the names stay
exactly what docs/configuration.md lists however the fields are grouped."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import Field, PrivateAttr, SecretStr, ValidationInfo, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from assistant.i18n.languages import catalog_named
from assistant.i18n.words import ENGLISH, LOCALES, Words
from assistant.mcp.config import ServerConfig
from assistant.model.options import ModelOptions, ToolMode, Wanted
from assistant.run.channels.channel_rules import SearchDefault
from assistant.run.core.post_limits import PostCaps
from assistant.run.core.prompt import PromptBudget
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

DEFAULT_PROMPT = (
    "You're a helpful AI assistant named {name}. You help the people of this Slack workspace "
    "with their questions and their work. Be concise and friendly; answer in the language "
    "you were asked in."
)

_CAPS = PostCaps()

# The prefix of each Slack token: a token pasted into the wrong variable is named at start,
# before Slack is asked (and before it answers with a less helpful `not_allowed_token_type`).
TOKEN_PREFIXES = {
    "bot_token": ("xoxb-", "a bot token (OAuth & Permissions → Bot User OAuth Token)"),
    "app_token": ("xapp-", "an app-level token (Basic Information → App-Level Tokens)"),
}


class Variables(BaseSettings):
    """One group of variables, read from the environment and `.env`."""

    # A blank `NAME=` (as .env.example leaves the secrets) is unset, not an empty value: an
    # empty SLACK_BOT_TOKEN beside SLACK_CLIENT_ID would otherwise be taken for a token.
    # `.env` holds every group's variables: each group takes its own.
    model_config = SettingsConfigDict(env_file=".env", extra="ignore", env_ignore_empty=True)


class StoreSettings(Variables):
    """Where the logs are: the storage group, and all the offline commands need."""

    database_url: str = DEFAULT_URL

    @field_validator("database_url")
    @classmethod
    def _supported_database(cls, value: str) -> str:
        database_url(value)  # raises ValueError saying what is wrong, password hidden
        return value or DEFAULT_URL


class SlackSettings(Variables):
    """Slack's tokens and secrets, its API, and how the app meets it."""

    bot_token: SecretStr | None = Field(None, alias="slack_bot_token")
    app_token: SecretStr | None = Field(None, alias="slack_app_token")
    signing_secret: SecretStr | None = Field(None, alias="slack_signing_secret")
    api_url: str = Field("https://slack.com/api/", alias="slack_api_url")
    # OAuth installs to many workspaces (docs/slack-setup.md, "Distributing the app"), for serve
    # and workers.
    client_id: str | None = Field(None, alias="slack_client_id")
    client_secret: SecretStr | None = Field(None, alias="slack_client_secret")
    state_secret: SecretStr | None = Field(None, alias="slack_state_secret")  # `serve` says why
    # Where `serve` listens for Slack's requests (and the health check).
    port: int = Field(3000, alias="port", ge=1, le=65535)
    # How long a request waits for Slack to come back (assistant/run/core/slack_outage.py); 0:
    # not at all.
    outage_seconds: float = Field(900.0, alias="assistant_slack_outage_seconds", ge=0.0, le=86400.0)

    @field_validator("bot_token", "app_token")
    @classmethod
    def _token_shape(cls, value: SecretStr | None, info: ValidationInfo) -> SecretStr | None:
        assert info.field_name is not None
        prefix, kind = TOKEN_PREFIXES[info.field_name]
        shown = value.get_secret_value() if value is not None else ""
        if shown and not shown.startswith(prefix):
            raise ValueError(f"not {kind}: it must start with {prefix}")
        return value

    @property
    def oauth(self) -> bool:
        """Installed to many workspaces through OAuth (SLACK_CLIENT_ID and _SECRET)."""
        return bool(self.client_id and self.client_secret)

    @property
    def api_base(self) -> str:
        """slack-sdk wants the base URL with its trailing slash."""
        return self.api_url.rstrip("/") + "/"


class ModelSettings(Variables):
    """The model server, the model, and what one request may carry."""

    api_key: SecretStr | None = Field(None, alias="openai_api_key")
    base_url: str | None = Field(None, alias="openai_base_url")
    timeout: float = Field(60.0, alias="openai_timeout", gt=0)
    max_retries: int = Field(2, alias="openai_max_retries", ge=0, le=10)
    name: str = Field("gpt-4o-mini", alias="assistant_model")
    transcription_model: str = Field("whisper-1", alias="assistant_transcription_model")
    context_tokens: int = Field(128_000, alias="assistant_context_tokens", ge=1_000)
    answer_tokens: int = Field(4_000, alias="assistant_answer_tokens", ge=100)
    stream: Literal["auto", "off"] = Field("auto", alias="assistant_stream")
    tool_mode: ToolMode = Field("auto", alias="assistant_tool_mode")
    # `serve` and `run` check the model server at start (`assistant check`'s summary).
    check: Literal["on", "off"] = Field("on", alias="assistant_model_check")
    max_images: int = Field(4, alias="assistant_max_images", ge=0, le=50)
    max_image_bytes: int = Field(5 * 1024 * 1024, alias="assistant_max_image_bytes", ge=1024)
    max_prompt_image_bytes: int = Field(
        12 * 1024 * 1024, alias="assistant_max_prompt_image_bytes", ge=1024
    )
    # What the models' tokens cost: the unit of the spend limits (docs/operations.md#spend-limits)
    # for the models it prices, and `assistant usage`'s estimate (UsageSettings reads it too).
    prices: Annotated[PriceTable | None, NoDecode] = Field(None, alias="assistant_prices")

    _prices = field_validator("prices", mode="before")(parse_prices)
    # Live answers judged (docs/evaluation.md, "Watching live quality"): the share of answers
    # a judge scores after they are posted, and its model (None: the answering model's).
    judge_sample: float = Field(0.0, alias="assistant_judge_sample", ge=0.0, le=1.0)
    judge_model: str | None = Field(
        None, alias="assistant_judge_model", min_length=1, max_length=100
    )

    def prompt_budget(self) -> PromptBudget:
        """What the log may take of each prompt (ASSISTANT_CONTEXT_TOKENS and
        ASSISTANT_ANSWER_TOKENS, for ASSISTANT_MODEL's tokenizer)."""
        return PromptBudget.for_window(self.name, self.context_tokens, self.answer_tokens)

    @property
    def answer_tokens_set(self) -> bool:
        """Whether ASSISTANT_ANSWER_TOKENS was set (else a cap is learned from the server)."""
        return "answer_tokens" in self.model_fields_set

    def options(self) -> ModelOptions:
        """What the model client is built from (`assistant.model.client`)."""
        assert self.api_key is not None
        return ModelOptions(
            api_key=self.api_key.get_secret_value(),
            base_url=self.base_url,
            timeout=self.timeout,
            max_retries=self.max_retries,
            model=self.name,
            transcription_model=self.transcription_model,
            answer_tokens=self.answer_tokens,
            tool_mode=self.tool_mode,
            answer_tokens_set=self.answer_tokens_set,
        )

    def wanted(self) -> Wanted:
        """What the settings ask of the model server (`assistant check`)."""
        return Wanted(
            context_tokens=self.context_tokens,
            answer_tokens=self.answer_tokens,
            stream=self.stream == "auto",
            images=self.max_images > 0,
            tool_mode=self.tool_mode,
            fixed_tokens=self.prompt_budget().fixed,
            answer_tokens_set=self.answer_tokens_set,
        )


class AnswerSettings(Variables):
    """Which messages are answered, and what one answer may do: its steps and posts."""

    max_steps: int = Field(8, alias="assistant_max_steps", ge=1, le=100)
    max_posts_per_reply: int = Field(
        _CAPS.posts_per_reply, alias="assistant_max_posts_per_reply", ge=1, le=100
    )
    max_tool_calls_per_reply: int = Field(
        _CAPS.calls_per_reply, alias="assistant_max_tool_calls_per_reply", ge=1, le=100
    )
    max_messages_per_run: int = Field(
        _CAPS.messages_per_run, alias="assistant_max_messages_per_run", ge=1, le=1000
    )
    max_post_chars_per_run: int = Field(
        _CAPS.chars_per_run, alias="assistant_max_post_chars_per_run", ge=100, le=10_000_000
    )
    max_mentions_per_message: int = Field(
        _CAPS.people_per_message, alias="assistant_max_mentions_per_message", ge=0, le=100
    )
    # How long a run's lease on its thread lasts unless renewed (assistant/run/core/lease.py).
    lease_seconds: float = Field(30.0, alias="assistant_run_lease_seconds", ge=1.0, le=3600.0)
    followups: bool = Field(True, alias="assistant_answer_followups")
    bots: bool = Field(False, alias="assistant_answer_bots")
    # Another bot's messages one thread takes (assistant/intake/bot_exchanges.py).
    max_bot_exchanges_per_thread: int = Field(
        5, alias="assistant_max_bot_exchanges_per_thread", ge=1, le=1000
    )
    # Routines (assistant/routines/): how often the processes that run answers look for the
    # due ones, and how many failed starts in a row pause one.
    routine_tick_seconds: float = Field(30.0, alias="assistant_routine_tick_seconds", ge=1.0,
                                        le=3600.0)  # fmt: skip
    routine_failures: int = Field(3, alias="assistant_routine_failures", ge=1, le=100)

    def post_caps(self) -> PostCaps:
        """What one run may post (see `assistant.run.core.post_limits`)."""
        return PostCaps(
            posts_per_reply=self.max_posts_per_reply,
            messages_per_run=self.max_messages_per_run,
            chars_per_run=self.max_post_chars_per_run,
            people_per_message=self.max_mentions_per_message,
            calls_per_reply=self.max_tool_calls_per_reply,
        )


class PersonaSettings(Variables):
    """Who the bot is and what it says of its own: its name, its instructions (entry 0), the
    personas a channel may choose, its language, and the assistant panel's words."""

    name: str = Field("Aya", alias="assistant_name")
    prompt: str | None = Field(None, alias="assistant_prompt")
    prompt_file: Path | None = Field(None, alias="assistant_prompt_file")
    # Named personas a channel may choose (docs/configuration.md, "Configuring channels"): YAML
    # or JSON.
    personas_file: Path | None = Field(None, alias="assistant_personas_file")
    # The language of the bot's own words for people whose Slack language has no catalog
    # (assistant/i18n/): one of LOCALES, in either spelling (pt_BR, pt-BR).
    locale: str = Field("en", alias="assistant_locale")
    # The assistant panel (assistant.settings.panel): read as written, not as pydantic-settings
    # decodes lists, so that a bad value is one clear problem like any other.
    greeting: str | None = Field(None, alias="assistant_greeting")
    suggested_prompts: Annotated[tuple[SuggestedPrompt, ...], NoDecode] = Field(
        DEFAULT_PROMPTS, alias="assistant_suggested_prompts"
    )
    loading_messages: Annotated[tuple[str, ...], NoDecode] = Field(
        DEFAULT_LOADING_MESSAGES, alias="assistant_loading_messages"
    )

    # ASSISTANT_PROMPT_FILE's last good text is kept with the settings, built once.
    _prompt_file: PromptFile | None = PrivateAttr(default=None)

    def model_post_init(self, context: Any, /) -> None:
        if self.prompt_file is not None:
            self._prompt_file = PromptFile(self.prompt_file)

    @field_validator("locale")
    @classmethod
    def _known_locale(cls, value: str) -> str:
        # `pt-BR` as Slack and BCP 47 write it, `pt_BR` as gettext does: the same catalog.
        catalog = catalog_named(value)
        if catalog is None:
            raise ValueError(f"no catalog of {value[:20]!r}: one of {', '.join(LOCALES)}")
        return catalog

    @model_validator(mode="after")
    def _one_prompt_source(self) -> PersonaSettings:
        if self.prompt and self.prompt_file:
            raise ValueError("set ASSISTANT_PROMPT or ASSISTANT_PROMPT_FILE, not both")
        return self

    _suggested_prompts = field_validator("suggested_prompts", mode="before")(parse_prompts)
    _loading_messages = field_validator("loading_messages", mode="before")(parse_loading_messages)

    def instructions(self) -> str:
        """Entry 0 of every new thread: the persona (ASSISTANT_PROMPT_FILE's, as
        `PromptFile.text` reads it)."""
        if self._prompt_file is not None:
            return self._prompt_file.text()
        if self.prompt:
            return self.prompt
        return DEFAULT_PROMPT.format(name=self.name)

    def personas(self) -> dict[str, str]:
        """The named personas of ASSISTANT_PERSONAS_FILE (none without it); ValueError saying
        what is wrong with the file."""
        if self.personas_file is None:
            return {}
        return read_personas(self.personas_file)

    def greeting_in(self, words: Words = ENGLISH) -> str:
        """What the panel says when a person opens it (ASSISTANT_GREETING; the default in
        `words`' language)."""
        if self.greeting:
            return self.greeting
        return words.gettext(DEFAULT_GREETING, name=self.name)

    def suggested_prompts_in(self, words: Words = ENGLISH) -> tuple[SuggestedPrompt, ...]:
        """ASSISTANT_SUGGESTED_PROMPTS as set, or the default ones in `words`' language."""
        if "suggested_prompts" in self.model_fields_set:
            return self.suggested_prompts
        return tuple(
            SuggestedPrompt(title=words.gettext(p.title), message=words.gettext(p.message))
            for p in DEFAULT_PROMPTS
        )

    def loading_messages_in(self, words: Words = ENGLISH) -> tuple[str, ...]:
        """ASSISTANT_LOADING_MESSAGES as set, or the default ones in `words`' language."""
        if "loading_messages" in self.model_fields_set:
            return self.loading_messages
        return tuple(words.gettext(message) for message in DEFAULT_LOADING_MESSAGES)


class ToolSettings(Variables):
    """The tools beyond the built-ins: the MCP servers (docs/configuration.md#mcp-servers),
    their calls' approval, and Slack's search."""

    # The servers' file, each call's deadline, the calls of one run, how much of one result is
    # kept, how much of one message is read at all.
    mcp_file: Path | None = Field(None, alias="assistant_mcp_file")
    mcp_call_seconds: float = Field(30.0, alias="assistant_mcp_call_seconds", gt=0, le=600)
    max_mcp_calls_per_run: int = Field(20, alias="assistant_max_mcp_calls_per_run", ge=0, le=1000)
    # How long a call waits for the person to answer a server's question (MCP's elicitation)
    # before it answers cancel; the call's own deadline waits meanwhile.
    mcp_elicitation_seconds: float = Field(
        600.0, alias="assistant_mcp_elicitation_seconds", gt=0, le=86_400
    )
    max_mcp_result_chars: int = Field(
        20_000, alias="assistant_max_mcp_result_chars", ge=100, le=1_000_000
    )
    max_mcp_result_bytes: int = Field(
        4_000_000, alias="assistant_max_mcp_result_bytes", ge=10_000, le=1_000_000_000
    )
    # The tools one model request carries, the built-ins among them (OpenAI's Chat Completions
    # takes at most 128 functions).
    max_tools_per_request: int = Field(
        128, alias="assistant_max_tools_per_request", ge=8, le=10_000
    )
    # How long a call that needs a person's approval waits for it (docs/configuration.md).
    approval_seconds: float = Field(
        900.0, alias="assistant_approval_seconds", gt=0, le=7 * 24 * 3600
    )
    # Slack's search as a tool (searchSlack), where a channel's settings do not say: off unless
    # turned on, and the conversation types it covers (comma-separated).
    slack_search: bool = Field(False, alias="assistant_slack_search")
    slack_search_channel_types: Annotated[
        tuple[SearchChannelType, ...], NoDecode, Field(min_length=1)
    ] = Field(("public_channel",), alias="assistant_slack_search_channel_types")

    # People's sign-ins to the `auth: user` servers
    # (docs/configuration.md#signing-in-to-mcp-servers): the Fernet keys their tokens are
    # sealed with (comma-separated, the newest first), and the base URL people's browsers
    # reach the app at (its /mcp/oauth/callback).
    secret_key: SecretStr | None = Field(None, alias="assistant_secret_key")
    public_url: str | None = Field(None, alias="assistant_public_url", max_length=500)
    # Channel memory (docs/log-format.md#channel-memory): how many tokens a new thread's memory
    # entry may take (the oldest memories left out past it, with a note); 0: no memory entry.
    memory_tokens: int = Field(2_000, alias="assistant_memory_tokens", ge=0, le=100_000)

    _mcp_servers: list[ServerConfig] | None = PrivateAttr(default=None)

    @field_validator("public_url")
    @classmethod
    def _public_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("an http:// or https:// URL with a host")
        if parts.query or parts.fragment:
            raise ValueError("a base URL, with no query or fragment")
        return value.rstrip("/")

    @field_validator("slack_search_channel_types", mode="before")
    @classmethod
    def _comma_separated(cls, value: Any) -> Any:
        if isinstance(value, str):
            return tuple(dict.fromkeys(p.strip() for p in value.split(",") if p.strip()))
        return value

    def mcp_servers(self) -> list[ServerConfig]:
        """The servers of ASSISTANT_MCP_FILE (none without it), read once; ValueError naming
        every problem of the file, one a line."""
        if self.mcp_file is None:
            return []
        if self._mcp_servers is None:
            self._mcp_servers = read_mcp_file(self.mcp_file)
        return self._mcp_servers

    def server_caps(self) -> ServerCaps:
        """What a run may do with the MCP servers' tools (ASSISTANT_MAX_MCP_CALLS_PER_RUN, …)."""
        return ServerCaps(
            calls_per_run=self.max_mcp_calls_per_run,
            result_chars=self.max_mcp_result_chars,
            tools_per_request=self.max_tools_per_request,
            elicitation_seconds=self.mcp_elicitation_seconds,
        )

    def search_default(self) -> SearchDefault:
        """Slack search where a channel's settings do not say (ASSISTANT_SLACK_SEARCH…)."""
        return SearchDefault(on=self.slack_search, channel_types=self.slack_search_channel_types)


class TelemetrySettings(Variables):
    """What the app says of itself: the console trace. (OpenTelemetry reads its own `OTEL_…`
    variables: docs/operations.md.)"""

    # `text` for people, `json` lines for log collectors, `off`.
    trace: TraceKind = Field("text", alias="assistant_trace")
