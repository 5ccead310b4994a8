"""The metrics: the GenAI conventions' two client histograms, with their recommended buckets,
and the app's own counters (`assistant.*`); docs/operations.md, "Watching it in production"."""

from __future__ import annotations

from assistant.telemetry import genai
from assistant.telemetry.setup import Providers


class Instruments:
    """The conventions' client histograms and the app's counters (`assistant.*`)."""

    def __init__(self, providers: Providers) -> None:
        if providers.meter_provider is None:
            from opentelemetry.metrics import NoOpMeterProvider

            meter = NoOpMeterProvider().get_meter("assistant")
        else:
            meter = providers.meter_provider.get_meter("assistant", schema_url=genai.SCHEMA_URL)
        self.duration = meter.create_histogram(
            "gen_ai.client.operation.duration",
            unit="s",
            description="GenAI operation duration",
            explicit_bucket_boundaries_advisory=genai.DURATION_BUCKETS,
        )
        self.tokens = meter.create_histogram(
            "gen_ai.client.token.usage",
            unit="{token}",
            description="Number of input and output tokens used",
            explicit_bucket_boundaries_advisory=genai.TOKEN_BUCKETS,
        )
        self.events = meter.create_counter(
            "assistant.events.acknowledged",
            unit="{event}",
            description="Slack requests acknowledged (events, block actions)",
        )
        self.runs = meter.create_counter(
            "assistant.runs", unit="{run}", description="Runs ended, by outcome"
        )
        self.posts = meter.create_counter(
            "assistant.slack.posts", unit="{message}", description="postMessage calls posted"
        )
        self.rate_limited = meter.create_counter(
            "assistant.slack.rate_limited",
            unit="{response}",
            description="Slack Web API answers HTTP 429",
        )
        self.stops = meter.create_counter(
            "assistant.stops", unit="{stop}", description="Runs stopped by the stop button"
        )
