"""A model the model service refuses (OpenAI's 404 `model_not_found`, or a 400 naming the
model): one call, never retried as if the service were down; the thread, the log and
`assistant channels list` name the model and say the service refused it; once the channel's
model is one the service serves, it answers and the refusal is gone."""

from __future__ import annotations

import logging

import pytest

from assistant.fakes import ids
from assistant.fakes.openai import responses as replies
from assistant.run.loop.apologies import SORRY_MODEL, sorry_refused
from context.channels import ChannelConfig
from tests.cli import run_cli
from tests.harness import answered_log, mention, script_answers

# How the app handles what it is sent, not the web server: the Bolt tier (tests/bolt_tier.py).
pytestmark = [pytest.mark.app_backend, pytest.mark.listeners]

SERVED = "gpt-4o-mini"  # ASSISTANT_MODEL
MISSING = "gpt-nope"


def channel_model(app, model: str) -> None:
    config = ChannelConfig(team=ids.TEAM_ID, channel=ids.CHANNEL_ID, model=model)
    app.assistant.store.set_channel_config(config)


def channels_list(app) -> list[str]:
    result = run_cli("channels", "list", env={"DATABASE_URL": app.settings.storage.database_url})
    assert result.returncode == 0, result.stderr
    return result.stdout.decode().splitlines()


@pytest.mark.parametrize(
    ("stream", "refusal", "detail"),
    [
        pytest.param("off", None, "HTTP 404, model_not_found", id="openai-404"),
        # vLLM's and others' 400 naming the model, to a streamed request: the model refused,
        # not streaming (which would have been asked again whole, of ASSISTANT_MODEL).
        pytest.param(
            "auto",
            replies.error(400, message=f"The model `{MISSING}` does not exist."),
            "HTTP 400",
            id="400-streamed",
        ),
    ],
)
def test_a_refused_channel_model_is_named_once_per_run_and_not_retried(
    make_app, slack, model, caplog, stream, refusal, detail
):
    caplog.set_level(logging.WARNING, logger="assistant.run.loop.endings")
    app = make_app(openai_max_retries=2, assistant_stream=stream)
    if refusal is None:
        model.models = frozenset({SERVED})  # the fake refuses the others as OpenAI does
    else:
        model.script(refusal)
    channel_model(app, MISSING)

    log = answered_log(app, slack, mention(slack, "hello"))
    assert len(model.requests) == 1  # not retried, not asked again of another model
    sorry = sorry_refused(MISSING, detail, channel_model=True).english()
    assert f"`{MISSING}`" in sorry and SORRY_MODEL.english() not in sorry
    assert [c.params["text"] for c in slack.calls_to("chat.postMessage")] == [sorry]
    said = f"the model service refused the model '{MISSING}' ({detail})"
    assert log[-1]["content"] == (
        f'Error: the model call failed: {said}. The user was told: "{sorry}"'
    )
    warnings = [r.getMessage() for r in caplog.records if r.name == "assistant.run.loop.endings"]
    where = f"{ids.TEAM_ID}/{ids.CHANNEL_ID}"
    assert warnings == [f"{said} in {where}, the channel's model: a run there cannot answer"]
    refused = f"model {MISSING!r} refused by the model service ({detail}) at ".replace("'", '"')
    listed = [line for line in channels_list(app) if "refused" in line]
    assert len(listed) == 1 and listed[0].startswith(f"{ids.TEAM_ID}\t{ids.CHANNEL_ID}\t{refused}")

    # Given a model the service serves, the channel is answered, and the refusal is gone.
    channel_model(app, SERVED)
    script_answers(model)
    log = answered_log(app, slack, mention(slack, "and now?"))
    assert model.requests[-1]["model"] == SERVED
    # Posted whole or streamed, as the answer came: the log says it was posted.
    assert [e["content"].get("toolCall") for e in log[2:]] == ["postMessage", "finishRequest"]
    assert [line for line in channels_list(app) if "refused" in line] == []


def test_a_404_that_names_no_model_is_no_refusal_of_it(make_app, slack, model):
    """A wrong OPENAI_BASE_URL answers 404 too: that says nothing about the model."""
    app = make_app()
    model.script(replies.error(404, message="Not Found"))
    log = answered_log(app, slack, mention(slack, "hello"))
    assert log[-1]["content"].startswith("Error: the model call failed: the model service "
                                         "answered HTTP 404: Not Found "
                                         "(invalid_request_error).")  # fmt: skip
    assert [c.params["text"] for c in slack.calls_to("chat.postMessage")] == [SORRY_MODEL.english()]
    assert [line for line in channels_list(app) if "refused" in line] == []


def test_a_refused_assistant_model_is_named_and_left_to_the_operator(make_app, slack, model):
    app = make_app(assistant_model=MISSING, openai_max_retries=2)
    model.models = frozenset({SERVED})
    log = answered_log(app, slack, mention(slack, "hello"))
    assert len(model.requests) == 1
    sorry = sorry_refused(MISSING, "HTTP 404, model_not_found", channel_model=False).english()
    assert "ASSISTANT_MODEL" in sorry and f"`{MISSING}`" in sorry
    assert [c.params["text"] for c in slack.calls_to("chat.postMessage")] == [sorry]
    assert log[-1]["content"].endswith(f'The user was told: "{sorry}"')
    assert [line for line in channels_list(app) if "refused" in line] == []  # no channel's
