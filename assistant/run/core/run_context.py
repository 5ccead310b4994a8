"""What a tool is given: its run's context, and the shape every tool function has. Here, below
both the agent and the tools, so that the tools need nothing from the agent that calls them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from slack_sdk.web.async_client import AsyncWebClient

from assistant.i18n.words import ENGLISH, Words
from assistant.run.channels.channel_rules import PostAs, SlackSearch
from assistant.run.core.post_limits import PostLimits
from assistant.run.core.prompt import ShownPrompt
from assistant.run.core.sessions import PROCESSING
from assistant.run.core.spend import CallHold
from assistant.slack.history import ThreadHistory
from context.channels import MemoryWriters
from context.entry import Entry
from context.log import ContextLog
from context.spend import SpendLimits
from context.storage import Store, ThreadKey
from context.toolcalls import ServerToolCall, ToolCall

if TYPE_CHECKING:
    from assistant.run.core.recorder import Recorder


class Cards(Protocol):
    """The task cards of a run's steps (`assistant.run.progress.step_cards.StepCards`; a Protocol
    here, which that module's imports would otherwise make a cycle)."""

    ts: str | None  # the cards' stream, while no post has taken it

    def take(self) -> tuple[str | None, list[dict[str, Any]]]: ...
    async def note(self, *entries: Entry) -> None: ...
    async def progress(self, index: int, text: str) -> None: ...
    async def close(self) -> None: ...
    async def finish_with(
        self, text: str, metadata: dict[str, Any], blocks: list[dict[str, Any]]
    ) -> str | None: ...


class RunTools(Protocol):
    """The run's tools (`assistant.run.tools.toolbox.Toolbox`; a Protocol here, which that
    module's imports would otherwise make a cycle)."""

    @property
    def schemas(self) -> list[dict[str, Any]]: ...
    @property
    def extra_schemas(self) -> list[dict[str, Any]]: ...
    def parse(self, name: str, arguments: str) -> ToolCall: ...
    def function(self, call: ToolCall) -> ToolFunction: ...
    @property
    def server_tools(self) -> frozenset[str]: ...
    def needs_approval(self, call: ToolCall) -> bool: ...
    def may_repeat(self, call: ToolCall) -> bool: ...
    def approval_rule(self, call: ServerToolCall) -> tuple[str, str | None]: ...
    async def approved(self, call: ServerToolCall, ctx: RunContext, index: int) -> str | None: ...


@dataclass(frozen=True)
class RunContext:
    """What a tool may touch: only its own thread (and, in a replay, no Slack at all)."""

    key: ThreadKey
    client: AsyncWebClient | None
    history: ThreadHistory | None
    bot_mention: str
    log: ContextLog
    store: Store
    posts: PostLimits = field(default_factory=PostLimits)  # what the answer has posted
    shown: ShownPrompt = field(default_factory=ShownPrompt)  # what the last prompt showed whole
    # Where a tool records an entry before it acts (a post cut to the caps); None: it refuses
    # what it would have to record first.
    recorder: Recorder | None = None
    # The task cards of the run's steps, while it streams (None: posted whole, or a replay).
    cards: Cards | None = None
    # The channel's (docs/configuration.md, "Configuring channels"): the model asked (None:
    # ASSISTANT_MODEL), and the name and icon its posts and streams carry (chat:write.customize).
    model: str | None = None
    post_as: PostAs = field(default_factory=PostAs)
    # The run's agent session is `processing` (assistant.run.progress.indicators): a stream it stops
    # before its end says so, or Slack's default (`active`) would take the stop button away.
    in_session: bool = False
    # The bot's own words as the people the run answers read them (docs/configuration.md,
    # "Languages"): apologies, task cards, buttons. English in a replay.
    words: Words = ENGLISH
    # Slack search where the channel turns it on, narrowed to what the thread's readers may
    # all see (None: off); a search is the person's being answered, with their message's
    # action token from the store (assistant.run.tools.search_slack).
    search: SlackSearch | None = None
    # The run's tools: the built-ins, searchSlack, its MCP servers' (None: the built-ins alone).
    toolbox: RunTools | None = None
    asker: str | None = None  # the Slack user id of the person the run answers last
    # Who may ask the run to write the channel's memory (rememberForChannel: offered only
    # where the asker may; checked again at the call). "off" in a replay.
    memory: MemoryWriters = "off"
    answer_from: int = 0  # the index of the first entry the run answers
    addressed: bool = False  # one of the entries it answers asked the bot itself (a mention)
    # The channel's spend limits in force (docs/operations.md#spend-limits); None: none.
    limits: SpendLimits | None = None
    # The model call's hold while it runs, counted by the write that records its usage.
    call_hold: CallHold = field(default_factory=CallHold)

    @property
    def session_status(self) -> str | None:
        """`chat.stopStream`'s `session_status` for a stream the run stops and goes on after."""
        return PROCESSING if self.in_session else None


# A tool gets its call, the run, and the index of the call's entry in the log; it returns
# the text of its result entry, or None when it has none.
ToolFunction = Callable[[Any, RunContext, int], Awaitable[str | None]]
