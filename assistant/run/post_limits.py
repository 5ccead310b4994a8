"""How much one run may post: text the model reads can carry an injection, so a reply or a
run cannot flood the thread, however many postMessage calls the model makes."""

from __future__ import annotations

from dataclasses import dataclass

from assistant.slack.text import is_invisible


@dataclass(frozen=True)
class PostCaps:
    """The caps (the defaults of the ASSISTANT_MAX_… settings)."""

    posts_per_reply: int = 3  # postMessage calls carried out per model reply
    messages_per_run: int = 10  # Slack messages (a long text split in several counts each)
    chars_per_run: int = 40_000  # characters of postMessage text, as the model wrote them
    people_per_message: int = 5  # distinct people a postMessage text may mention


class PostLimits:
    """What one run has posted so far, against its caps."""

    def __init__(self, caps: PostCaps | None = None) -> None:
        self.caps = caps or PostCaps()
        self.reply_posts = 0
        self.messages = 0
        self.chars = 0

    def new_reply(self) -> None:
        """The calls that follow come from another model reply."""
        self.reply_posts = 0

    def refusal(self, text: str, messages: int) -> str | None:
        """Why `text`, posted as `messages` Slack messages, may not be posted; None if it may.
        A text over what is left is refused whole: half a message would read as a whole one."""
        caps = self.caps
        if is_invisible(text):
            return "its text is only whitespace or invisible characters"
        if self.reply_posts >= caps.posts_per_reply:
            return (
                f"this reply already posted {self.reply_posts} times, the most one reply may "
                "(ASSISTANT_MAX_POSTS_PER_REPLY)"
            )
        if self.chars + len(text) > caps.chars_per_run:
            return (
                f"its {len(text):,} characters are more than the "
                f"{caps.chars_per_run - self.chars:,} this run may still post of its "
                f"{caps.chars_per_run:,} (ASSISTANT_MAX_POST_CHARS_PER_RUN)"
            )
        if self.messages + messages > caps.messages_per_run:
            return (
                f"it would take {messages} Slack message{'s' if messages > 1 else ''} and this "
                f"run has {caps.messages_per_run - self.messages} left of its "
                f"{caps.messages_per_run} (ASSISTANT_MAX_MESSAGES_PER_RUN)"
            )
        return None

    def charge(self, text: str, messages: int) -> None:
        """Count a text that is being posted."""
        self.reply_posts += 1
        self.messages += messages
        self.chars += len(text)
