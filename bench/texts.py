# ruff: noqa: RUF001 -- typographic quotes on purpose: they are what real replies contain
"""Conversation text for the benchmarks: deterministic, and realistic in length and alphabet.

Replies carry typographic quotes and dashes, as model output does, and now and then an emoji:
one such character makes the whole prompt string wider in memory (2 or 4 bytes a character),
which is what a real log costs to join and send.
"""

from __future__ import annotations

import random
import re

QUESTIONS = (
    "Can you summarise what we decided about the Friday deploy?",
    "Where is the runbook for rotating the staging database credentials?",
    "Could you draft a short note to the café about Thursday’s team lunch for 12 people?",
    "What’s the difference between the v2 and v3 billing exports?",
    "Remind me who owns the on-call rota for next week.",
    "Is the São Paulo office closed on Monday?",
    "Please list the open questions from this thread so far.",
    "How do I get read access to the analytics warehouse?",
    "Can we move the retro to 15:00? Half the team is in another meeting.",
    "Translate the last message into Portuguese, please.",
)
DETAILS = (
    "The link in the wiki is broken.",
    "We tried `make deploy` twice and it timed out on the migration step.",
    "Ana said the numbers in the Q3 sheet don’t match the dashboard.",
    "No rush, end of day is fine.",
    "Context: the customer is on the enterprise plan.",
    "I already asked in #help-it but nobody answered.",
)
ANSWERS = (
    "Here’s the short version: the deploy moves to Monday 10:00 and Ana runs it.",
    "The runbook lives in *Engineering → Runbooks → Databases*; step 4 covers staging.",
    "Draft: “Hi! Could we book a table for 12 on Thursday at 12:30? Thanks — the team.”",
    "v3 adds per-seat lines and drops the legacy `plan_id` column; v2 stays until March.",
    "Next week’s on-call is Bruno (primary) and Mei (secondary).",
    "Yes — Monday is a public holiday in São Paulo, so the office is closed. 🎉",
    "Open questions:\n1. Who signs off the budget?\n2. Do we keep the old export?",
    "Ask in #data-access with your manager’s approval; it usually takes a day.",
    "Done: the retro is now at 15:00 in the usual room.",
    "I couldn’t find that in the thread; could you share the doc link?",
)
REASONS = (
    "The user asked a direct question I can answer from the thread.",
    "Answering the newest unanswered messages.",
    "The request is complete.",
    "I need the earlier messages of the thread to answer well.",
)

TAG = re.compile(r"\[q:([0-9a-z-]+)\]")


def tag(thread: int, message: int) -> str:
    """A mention's unique label; the scripted model repeats it in the reply that answers it."""
    return f"[q:t{thread:05d}-m{message:03d}]"


def user_text(rng: random.Random, label: str) -> str:
    parts = [rng.choice(QUESTIONS)]
    if rng.random() < 0.5:
        parts.append(rng.choice(DETAILS))
    return f"{label} {' '.join(parts)}"


def answer_text(rng: random.Random, labels: list[str]) -> str:
    body = "\n\n".join(rng.sample(ANSWERS, k=rng.randint(1, 3)))
    return f"{' '.join(labels)} {body}"


def reasoning(rng: random.Random) -> str:
    return rng.choice(REASONS)


def tags_in(text: str) -> list[str]:
    return [f"[q:{found}]" for found in TAG.findall(text)]
