"""Local fakes of Slack and OpenAI for tests and benchmarks (no network beyond loopback).

    with FakeSlack() as slack, FakeOpenAI() as model:
        ...  # point the app at slack.api_url and model.base_url

See `fakes.slack`, `fakes.events` and `fakes.openai` for the details.
"""

from fakes.openai import FakeOpenAI
from fakes.slack import Call, FakeSlack

__all__ = ["Call", "FakeOpenAI", "FakeSlack"]
