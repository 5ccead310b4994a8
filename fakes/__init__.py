"""Local fakes of Slack and OpenAI for tests and benchmarks (no network beyond loopback).

    with FakeSlack() as slack, FakeOpenAI() as model:
        ...  # point the app at slack.api_url and model.base_url

See `fakes.slack`, `fakes.events`, `fakes.event_requests`, `fakes.openai` and
`fakes.openai_responses` for the details.
"""

from fakes.openai import FakeOpenAI
from fakes.slack import Call, FakeSlack

__all__ = ["Call", "FakeOpenAI", "FakeSlack"]
