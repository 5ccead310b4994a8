"""How much one answer may post: text the model reads can carry an injection, so a reply or an
answer cannot flood the thread, however many postMessage calls the model makes.

The caps bound an answer (the runs that answer the same requests), not a process: a run
resumed after a crash starts with what the earlier runs posted already counted
(`assistant/run/loop/answer_so_far.py`). A text refused only for its length is cut to what is left,
with a note, rather than dropped: a person must never be left with nothing. Nothing is
posted after a cut: its note says the answer ends there. A text the answer posted already is
not posted again: a small model that loops would otherwise show the same answer twice."""

from __future__ import annotations

from dataclasses import dataclass

from assistant.i18n.words import ENGLISH, N_, Words
from assistant.slack.text import is_invisible, neutralize_mentions, split_message

# Shown in the language of the people answered; the log's entry of a cut names it in English.
CUT_NOTE = N_("_(I had to cut my answer here: it was longer than I may post in one answer.)_")
_SEPARATOR = "\n\n"
_FENCE_CLOSE = "\n```"


@dataclass(frozen=True)
class PostCaps:
    """The caps (the defaults of the ASSISTANT_MAX_… settings)."""

    posts_per_reply: int = 3  # postMessage calls carried out per model reply
    messages_per_run: int = 10  # Slack messages (a long text split in several counts each)
    chars_per_run: int = 40_000  # characters of postMessage text, as the model wrote them
    people_per_message: int = 5  # distinct people a postMessage text may mention
    # Tool calls carried out per model reply (finishRequest always is): the model's output
    # tokens alone would let one reply read hundreds of entries into the next prompt.
    calls_per_reply: int = 10


@dataclass(frozen=True)
class Cut:
    """A text posted cut: its first `kept` characters, then the note (`text`)."""

    kept: int
    text: str


def cut_text(text: str, kept: int, words: Words = ENGLISH) -> str:
    """What is posted of `text` cut after its first `kept` characters: those (a code block
    left open closed, so the note does not render as code), then the note in `words`'
    language. Depends on these alone, so a resumed run posts the same text from the log."""
    head = text[:kept].rstrip()
    if head.count("```") % 2 == 1:
        head += _FENCE_CLOSE
    note = words.gettext(CUT_NOTE)
    return f"{head}{_SEPARATOR}{note}" if head else note


class PostLimits:
    """What one answer has posted so far, against its caps."""

    def __init__(self, caps: PostCaps | None = None) -> None:
        self.caps = caps or PostCaps()
        self.reply_posts = 0
        self.reply_calls = 0
        self.skipped: dict[str, int] = {}  # the reply's calls past the cap: by tool, in order
        self.messages = 0
        self.chars = 0
        self.posted: set[str] = set()  # the texts posted, stripped

    def new_reply(self) -> None:
        """The calls that follow come from another model reply."""
        self.reply_posts = 0
        self.reply_calls = 0
        self.skipped = {}

    def skip(self, tool: str) -> None:
        """A call past the reply's cap (`call_refusal`), neither recorded nor carried out:
        counted, for one entry that says how many (`skipped_note`)."""
        self.skipped[tool] = self.skipped.get(tool, 0) + 1

    def skipped_note(self) -> str | None:
        """The one entry for the reply's calls past the cap, once (None: there were none)."""
        if not self.skipped:
            return None
        total = sum(self.skipped.values())
        tools = ", ".join(f"{count:,} {tool}" for tool, count in self.skipped.items())
        self.skipped = {}
        calls, were = ("call", "was") if total == 1 else ("calls", "were")
        cap = self.caps.calls_per_reply
        return (
            f"Error: {total:,} more tool {calls} of this reply ({tools}) {were} not carried out "
            f"or recorded: this reply already made {cap} tool call{'' if cap == 1 else 's'}, "
            "the most one reply may (ASSISTANT_MAX_TOOL_CALLS_PER_REPLY)."
        )

    @property
    def calls_used_up(self) -> bool:
        """The reply's next tool call will be refused (`call_refusal`)."""
        return self.reply_calls >= self.caps.calls_per_reply

    def call_refusal(self) -> str | None:
        """Why the reply's next tool call may not be carried out (None: it may); counts it."""
        self.reply_calls += 1
        if self.reply_calls <= self.caps.calls_per_reply:
            return None
        return (
            f"this reply already made {self.caps.calls_per_reply} tool calls, the most one "
            "reply may (ASSISTANT_MAX_TOOL_CALLS_PER_REPLY)"
        )

    def chunks(self, text: str) -> list[str]:
        """The Slack messages `text` becomes: mentions made safe, split where it is long."""
        return split_message(neutralize_mentions(text, self.caps.people_per_message))

    def refusal(self, text: str, messages: int, whole: bool = True) -> str | None:
        """Why `text`, posted as `messages` Slack messages, may not be posted whole; None if
        it may. `whole`: `text` is the post's whole text, not the part of it streamed so far
        (which may yet grow past a text posted before)."""
        caps = self.caps
        if is_invisible(text):
            return "its text is only whitespace or invisible characters"
        if whole and text.strip() in self.posted:
            return "this answer already posted the same text"
        if self.reply_posts >= caps.posts_per_reply:
            return (
                f"this reply already posted {self.reply_posts} times, the most one reply may "
                "(ASSISTANT_MAX_POSTS_PER_REPLY)"
            )
        if self.chars + len(text) > caps.chars_per_run:
            return (
                f"its {len(text):,} characters are more than the "
                f"{caps.chars_per_run - self.chars:,} this answer may still post of its "
                f"{caps.chars_per_run:,} (ASSISTANT_MAX_POST_CHARS_PER_RUN)"
            )
        if self.messages + messages > caps.messages_per_run:
            return (
                f"it would take {messages} Slack message{'s' if messages > 1 else ''} and this "
                f"answer has {caps.messages_per_run - self.messages} left of its "
                f"{caps.messages_per_run} (ASSISTANT_MAX_MESSAGES_PER_RUN)"
            )
        return None

    def shortened(self, text: str, words: Words = ENGLISH) -> Cut | None:
        """For a text refused for its length alone (the characters or Slack messages left):
        the cut of it that fits, ending with the note. None when it is refused for another
        reason, or not even the note fits (then earlier posts used up the caps: the person
        has seen those). The note in `words`' language."""
        caps = self.caps
        if is_invisible(text) or self.reply_posts >= caps.posts_per_reply:
            return None
        if text.strip() in self.posted:
            return None
        messages_left = caps.messages_per_run - self.messages
        note = words.gettext(CUT_NOTE)
        room = caps.chars_per_run - self.chars - len(_SEPARATOR + note + _FENCE_CLOSE)
        limit = min(room, len(text))
        while limit >= 0 and messages_left > 0:
            kept = _break_before(text, limit)
            cut = cut_text(text, kept, words)
            parts = len(self.chunks(cut))
            if parts <= messages_left:
                return Cut(kept, cut)
            # Too many messages: keep about the share that fits, at least a tenth less.
            limit = min(kept * messages_left // parts, kept * 9 // 10, kept - 1)
        return None

    def charge(self, text: str, messages: int, cut: bool = False) -> None:
        """Count a text that is being posted (`cut`: a `shortened` one)."""
        self.reply_posts += 1
        self.messages += messages
        self.chars += len(text)
        self.posted.add(text.strip())
        if cut:
            self.chars = self.caps.chars_per_run  # its note says the answer ends there

    def count_earlier(self, text: str, cut: bool = False) -> None:
        """Count a text an earlier run of the same answer posted (it was no reply of this
        run's, so the per-reply count is left alone)."""
        self.messages += len(self.chunks(text))
        self.chars = self.caps.chars_per_run if cut else self.chars + len(text)
        self.posted.add(text.strip())


def _break_before(text: str, limit: int) -> int:
    """How many characters of `text` to keep to keep at most `limit`: up to its last
    paragraph break, line break or space in the second half of them, else `limit`."""
    if limit >= len(text):
        return len(text)
    for separator in ("\n\n", "\n", " "):
        at = text.rfind(separator, 0, limit)
        if at > limit // 2:
            return at
    return max(limit, 0)
