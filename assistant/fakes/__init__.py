"""Local fakes of Slack and OpenAI for tests and benchmarks (no network beyond loopback).

    with FakeSlack() as slack, FakeOpenAI() as model:
        ...  # point the app at slack.api_url and model.base_url

See `assistant.fakes.slack.server`, `assistant.fakes.events.builders`,
`assistant.fakes.requests`,
`assistant.fakes.openai.server` and `assistant.fakes.openai.responses` for the details.
"""

from assistant.fakes.openai.server import FakeOpenAI
from assistant.fakes.slack.server import Call, FakeSlack

__all__ = ["Call", "FakeOpenAI", "FakeSlack"]
