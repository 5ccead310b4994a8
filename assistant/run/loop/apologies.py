"""What the thread is told when a run ends without its answer
(docs/log-format.md#how-a-run-ends): one short message, in the language of the people it
answers; the reason, and the message in its source text, going to the log."""

from assistant.i18n.words import N_, Message
from context.spend import BudgetReached, shown_amount, shown_reset

SORRY_MODEL = Message(
    N_(
        "Sorry, I couldn't get an answer from the language model just now. "
        "Please try again in a little while."
    )
)
SORRY_SLACK = Message(
    N_("Sorry, something went wrong on Slack's side while I was answering. Please try again.")
)
SORRY_BUDGET = Message(
    N_(
        "Sorry, this thread's instructions and newest messages no longer fit in what I can "
        "read at once. Please start a new thread."
    )
)
# The model's window cannot hold the fixed instructions, the tools and the answer's cap: no
# thread can be answered, a new one no more than this, until an admin changes a setting.
SORRY_WINDOW = Message(
    N_(
        "Sorry, I can't answer: the language model's context window is too small for my "
        "instructions and an answer. Trying again won't help until an admin gives the model "
        "server a larger context window or lowers ASSISTANT_ANSWER_TOKENS (`assistant check` "
        "says by how much)."
    )
)
SORRY_STEPS = Message(
    N_(
        "Sorry, I had to stop before finishing: this took more steps than I'm allowed. "
        "Please try again, perhaps asking for less at once."
    )
)
SORRY_NO_ANSWER = Message(
    N_("Sorry, I couldn't come up with an answer to this. Please try asking another way.")
)
SORRY_UNEXPECTED = Message(
    N_("Sorry, something went wrong on my side while I was answering. Please try again.")
)


def sorry_refused(model: str, detail: str, channel_model: bool) -> Message:
    """The model service refused the model the run asked for: which one, and what would
    help (trying again would not). `channel_model`: the channel's settings chose it."""
    shown = model.replace("`", "'").replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    if channel_model:
        text = N_(
            "Sorry, I can't answer: the language model service refused the model `{model}` "
            "that this channel is set to use ({detail}). Trying again won't help until an "
            "admin changes the channel's model (in my App Home)."
        )
    else:
        text = N_(
            "Sorry, I can't answer: the language model service refused the model `{model}` "
            "that I am set to use ({detail}). Trying again won't help until my operator "
            "changes ASSISTANT_MODEL."
        )
    return Message(text, {"model": shown, "detail": detail})


def budget_note(reached: BudgetReached) -> Message:
    """A call that would pass the channel's budget (docs/operations.md#spend-limits): which
    budget, and when it resets; said once per budget and period in a thread."""
    amount = shown_amount(reached.unit, reached.limit)
    if reached.period.kind == "daily":
        text = N_(
            "This channel has reached its daily budget of {amount}; it resets at {reset}. "
            "Until then I won't answer here, unless an admin raises it in my App Home."
        )
    else:
        text = N_(
            "This channel has reached its monthly budget of {amount}; it resets on {reset}. "
            "Until then I won't answer here, unless an admin raises it in my App Home."
        )
    return Message(text, {"amount": amount, "reset": shown_reset(reached.period)})
