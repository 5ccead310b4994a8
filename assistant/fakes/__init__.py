"""Local fakes of Slack and OpenAI for tests and benchmarks (no network beyond loopback).

    with FakeSlack() as slack, FakeOpenAI() as model:
        ...  # point the app at slack.api_url and model.base_url

See `assistant.fakes.slack`, `assistant.fakes.events`, `assistant.fakes.event_requests`,
`assistant.fakes.openai` and `assistant.fakes.openai_responses` for the details.
"""

from assistant.fakes.openai import FakeOpenAI
from assistant.fakes.slack import Call, FakeSlack

__all__ = ["Call", "FakeOpenAI", "FakeSlack"]
