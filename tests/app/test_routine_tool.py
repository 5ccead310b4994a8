"""The scheduleRoutine tool end to end (docs/slack-features.md, "Routines"): offered in a
channel's threads, a good schedule posted with Confirm and Cancel for the person answered, a
bad one answered to the model; the clicks through Bolt: another person refused, Confirm
creating one routine however often clicked, Cancel creating none."""

from __future__ import annotations

import pytest

from assistant.fakes import ids
from assistant.fakes.events.builders import dm
from assistant.fakes.events.panel import button_click, signed_interaction_request
from assistant.fakes.openai import responses as replies
from assistant.run.tools.schedule_routine import CANCEL, CONFIRM
from tests.harness import answered_log, mention, seed, thread_of

pytestmark = [pytest.mark.app_backend, pytest.mark.listeners]

OTHER = "U0SOMEONE1"


def propose_steps(**args: str) -> list[tuple[str, dict]]:
    call = {"prompt": "Summarize the incidents.", **args, "reasoning": "they asked"}
    said = ("postMessage", {"text": "See the buttons.", "reasoning": "answer"})
    return [("scheduleRoutine", call), said, ("finishRequest", {"reasoning": "done"})]


def propose(**args: str) -> replies.Completion:
    return replies.tool_calls(*propose_steps(**args))


def offered(request: dict) -> list[str]:
    return [tool["function"]["name"] for tool in request["tools"]]


def _proposals(slack) -> list[dict]:
    return [
        c.response["message"]
        for c in slack.calls_to("chat.postMessage")
        if any(b.get("type") == "actions" for b in c.params.get("blocks") or [])
    ]


def _proposal(slack) -> dict:
    [message] = _proposals(slack)
    return message


def _click(app, message: dict, action: str, user: str) -> None:
    payload = button_click(message, action, channel=ids.CHANNEL_ID, user=user)
    body, headers = signed_interaction_request(payload)
    assert app.request("POST", "/slack/events", body, headers).status == 200
    app.wait_listeners()


def _routines(app) -> list:
    return app.assistant.store.routines()


def test_a_proposal_confirmed_by_its_person_is_one_routine_in_their_zone(app, slack, model):
    model.script(propose(cron="0 9 * * 1-5"))
    first = mention(slack, "every weekday at 9, summarize the incidents")
    log = answered_log(app, slack, first)

    assert "scheduleRoutine" in offered(model.requests[0])
    assert log[2]["content"]["toolCall"] == "scheduleRoutine"
    assert log[3]["content"].startswith(
        f"Proposed as a routine (entry 2), waiting for <@{ids.USER_ID}> to confirm"
    )
    message = _proposal(slack)
    assert message["text"] == (
        "Schedule this routine? Summarize the incidents. (cron 0 9 * * 1-5, in your time zone)"
    )
    buttons = [e for b in message["blocks"] if b["type"] == "actions" for e in b["elements"]]
    assert [(b["action_id"], b["value"]) for b in buttons] == [(CONFIRM, "2"), (CANCEL, "2")]
    assert _routines(app) == []

    slack.add_user(OTHER, "someone")
    _click(app, message, CONFIRM, OTHER)  # not the person it was proposed to
    [told] = slack.calls_to("chat.postEphemeral")
    assert told.params["user"] == OTHER and "Only the person" in told.params["text"]
    assert _routines(app) == [] and not slack.calls_to("chat.update")

    _click(app, message, CONFIRM, ids.USER_ID)
    _click(app, message, CONFIRM, ids.USER_ID)  # a second click changes nothing
    [routine] = _routines(app)
    assert (routine.team, routine.channel, routine.creator) == (
        ids.TEAM_ID,
        ids.CHANNEL_ID,
        ids.USER_ID,
    )
    assert (routine.prompt, routine.cron, routine.tz) == (
        "Summarize the incidents.",
        "0 9 * * 1-5",
        "Europe/Berlin",  # the person's zone in Slack (the fake's users.info)
    )
    [update] = slack.calls_to("chat.update")
    assert update.params["text"].startswith(f"Scheduled as routine {routine.id} by <@")
    after = app.log(thread_of(first))
    assert [e["content"] for e in after[-2:]] == [
        f"<@{ids.USER_ID}> confirmed the routine proposed at entry 2.",
        f"Routine {routine.id} scheduled as proposed at entry 2; next run "
        + update.params["text"].split("next run ")[1],
    ]


def test_cancel_schedules_nothing_and_is_recorded(app, slack, model):
    model.script(propose(at="2099-01-01T09:00+01:00"))
    first = mention(slack, "remind us once in 2099")
    answered_log(app, slack, first)
    message = _proposal(slack)
    assert message["text"].endswith("(once, at 2099-01-01 08:00 UTC)")

    _click(app, message, CANCEL, ids.USER_ID)
    _click(app, message, CONFIRM, ids.USER_ID)  # decided already
    assert _routines(app) == []
    [update] = slack.calls_to("chat.update")
    assert update.params["text"] == f"Cancelled by <@{ids.USER_ID}>: no routine was scheduled."
    log = app.log(thread_of(first))
    assert log[-1]["content"] == (
        f"<@{ids.USER_ID}> cancelled the routine proposed at entry 2; nothing was scheduled."
    )


def test_a_bad_cron_is_answered_to_the_model_and_nothing_is_posted(app, slack, model):
    model.script(propose(cron="61 9 * * *", tz="Europe/Paris"))
    log = answered_log(app, slack, mention(slack, "every day at 9:61"))
    assert log[3]["content"] == (
        "Error: not proposed: '61 9 * * *' is not a cron expression (m h dom mon dow)."
    )
    assert _proposals(slack) == []
    assert _routines(app) == []


def test_a_direct_message_is_not_offered_the_tool(app, slack, model):
    model.script(replies.tool_calls(*propose_steps()[1:]))
    answered_log(app, slack, seed(slack, dm("every day at nine, summarize")))
    assert "scheduleRoutine" not in offered(model.requests[0])
