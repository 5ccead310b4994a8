"""What the thread is told when a run ends without its answer
(docs/log-format.md#how-a-run-ends): one short message, the reason going to the log."""

SORRY_MODEL = (
    "Sorry, I couldn't get an answer from the language model just now. "
    "Please try again in a little while."
)
SORRY_SLACK = "Sorry, something went wrong on Slack's side while I was answering. Please try again."
SORRY_BUDGET = (
    "Sorry, this thread's instructions and newest messages no longer fit in what I can read "
    "at once. Please start a new thread."
)
SORRY_STEPS = (
    "Sorry, I had to stop before finishing: this took more steps than I'm allowed. "
    "Please try again, perhaps asking for less at once."
)


def sorry_refused(model: str, detail: str, channel_model: bool) -> str:
    """The model service refused the model the run asked for: which one, and what would
    help (trying again would not). `channel_model`: the channel's settings chose it."""
    shown = model.replace("`", "'").replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    whose, fix = (
        ("this channel is set to use", "an admin changes the channel's model (in my App Home)")
        if channel_model
        else ("I am set to use", "my operator changes ASSISTANT_MODEL")
    )
    return (
        f"Sorry, I can't answer: the language model service refused the model `{shown}` that "
        f"{whose} ({detail}). Trying again won't help until {fix}."
    )


SORRY_UNEXPECTED = "Sorry, something went wrong on my side while I was answering. Please try again."
