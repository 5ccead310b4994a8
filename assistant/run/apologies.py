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
SORRY_UNEXPECTED = "Sorry, something went wrong on my side while I was answering. Please try again."
