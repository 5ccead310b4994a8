"""Channel memory on the App Home, its requests dispatched to the app's Bolt app
(docs/slack-features.md#channel-memory): each person sees the memories of the channels whose
settings they see; Edit and Delete are offered to the channel's editors and to a memory's
author on their own, and checked again when clicked or submitted (a forged request changes
nothing); every change is a row of the audit (`app home`); the section is bounded."""

from __future__ import annotations

import pytest

from assistant.fakes import ids
from assistant.fakes.events.home import home_click, view_submission
from assistant.fakes.slack.blocks import view_problems
from assistant.panel.home_memory import (
    MAX_BLOCKS,
    MEMORY_DELETE_ACTION,
    MEMORY_EDIT_ACTION,
    NOT_YOURS,
    memory_blocks,
    target,
)
from context.memory import Memory, scope_of
from tests.app.test_app_home import PUBLIC, SECRET, open_home
from tests.app.test_channel_settings import ADMIN, BOB, interact, text_of

pytestmark = [pytest.mark.app_backend, pytest.mark.listeners]

USER = ids.USER_ID


def memory_buttons(view: dict, action: str) -> list[str]:
    return [
        element["value"]
        for block in view["blocks"]
        for element in block.get("elements", [])
        if element.get("action_id") == action
    ]


def texts(app, channel: str) -> list[str]:
    return [m.text for m in app.assistant.store.memories(ids.TEAM_ID, channel)]


def test_people_see_their_channels_memories_and_change_only_what_they_may(app, slack, model):
    slack.add_user(ADMIN, "ada", is_admin=True)
    slack.add_user(BOB, "bob")
    slack.conversations.private(SECRET, [BOB], name="secret")
    slack.conversations.public(PUBLIC, [USER], name="public")
    store = app.assistant.store
    own = store.remember(ids.TEAM_ID, PUBLIC, "standup at 9", USER, "cli", "cli")
    admins = store.remember(
        ids.TEAM_ID, PUBLIC, "<!channel> deploys on Tuesdays", ADMIN, "cli", "cli"
    )
    secret = store.remember(ids.TEAM_ID, SECRET, "the secret plans", BOB, "cli", "cli")

    tab = open_home(app, slack, USER)
    shown = text_of(tab)
    assert "standup at 9" in shown and "&lt;!channel&gt; deploys on Tuesdays" in shown
    assert "<!channel>" not in shown and "secret plans" not in shown
    mine = f"{PUBLIC}/{own.id}"
    assert memory_buttons(tab, MEMORY_EDIT_ACTION) == [mine]  # their own only
    assert memory_buttons(tab, MEMORY_DELETE_ACTION) == [mine]
    admin_tab = open_home(app, slack, ADMIN)
    assert "the secret plans" in text_of(admin_tab)
    assert len(memory_buttons(admin_tab, MEMORY_DELETE_ACTION)) == 3

    # Forged clicks (buttons of the admin's tab, sent as USER): nothing changes.
    for memory in (admins, secret):
        value = f"{memory.channel}/{memory.id}"
        payload = home_click(slack, admin_tab, MEMORY_DELETE_ACTION, value, user=USER)
        assert interact(app, payload)[0] == 200
    opened = len(slack.calls_to("views.open"))
    payload = home_click(slack, admin_tab, MEMORY_EDIT_ACTION, f"{SECRET}/{secret.id}", user=USER)
    assert interact(app, payload)[0] == 200
    assert len(slack.calls_to("views.open")) == opened  # no modal for them
    assert texts(app, PUBLIC) == ["standup at 9", "<!channel> deploys on Tuesdays"]
    assert texts(app, SECRET) == ["the secret plans"]

    # Their own: Edit opens the modal; an empty text is refused in it; a text is kept.
    assert interact(app, home_click(slack, tab, MEMORY_EDIT_ACTION, mine, user=USER))[0] == 200
    slack.wait_for_call("views.open", count=opened + 1)
    modal = slack.modals[-1]
    field = {"type": "plain_text_input", "value": " \x00 "}
    _, answer = interact(app, view_submission(slack, modal, {"memory_text": field}, user=USER))
    assert answer["errors"]["memory_text"] == "the memory is empty"
    field = {"type": "plain_text_input", "value": "standup at 9:30"}
    assert interact(app, view_submission(slack, modal, {"memory_text": field}, user=USER)) == (
        200,
        {},
    )
    assert texts(app, PUBLIC)[0] == "standup at 9:30"

    # A forged submission (the modal of someone else's memory): refused, nothing changes.
    forged = {**modal, "private_metadata": f"{PUBLIC}/{admins.id}"}
    _, answer = interact(app, view_submission(slack, forged, {"memory_text": field}, user=USER))
    assert answer == {"response_action": "errors", "errors": {"memory_text": NOT_YOURS}}
    garbled = {**modal, "private_metadata": "../C1/x"}
    _, answer = interact(app, view_submission(slack, garbled, {"memory_text": field}, user=USER))
    assert answer["errors"] == {"memory_text": NOT_YOURS}
    assert texts(app, PUBLIC)[1] == "<!channel> deploys on Tuesdays"

    # Delete: their own goes; the admin deletes anyone's.
    tab = slack.home_tabs[USER]
    assert interact(app, home_click(slack, tab, MEMORY_DELETE_ACTION, mine, user=USER))[0] == 200
    value = f"{SECRET}/{secret.id}"
    assert (
        interact(app, home_click(slack, admin_tab, MEMORY_DELETE_ACTION, value, user=ADMIN))[0]
        == 200
    )
    assert texts(app, PUBLIC) == ["<!channel> deploys on Tuesdays"] and texts(app, SECRET) == []
    audit = [
        (c.memory_id, c.action, c.actor, c.via)
        for c in store.memory_changes(ids.TEAM_ID)
        if c.via == "app home"
    ]
    assert audit == [
        (own.id, "edited", USER, "app home"),
        (own.id, "forgotten", USER, "app home"),
        (secret.id, "forgotten", ADMIN, "app home"),
    ]


def test_the_section_is_bounded_and_says_how_many_more():
    memories = [
        Memory(
            id=n,
            team=ids.TEAM_ID,
            scope=scope_of(f"C{n % 40:08d}"),
            channel=f"C{n % 40:08d}",
            text="x" * 1000,
            author="U0AUTHOR01",
            created_at="2026-11-29T10:00:00Z",
            source="cli",
        )
        for n in range(1, 2001)
    ]
    blocks = memory_blocks(memories, lambda m: True)
    assert len(blocks) <= MAX_BLOCKS
    assert view_problems({"type": "home", "blocks": blocks}) == []
    shown = text_of({"blocks": blocks})
    assert "47 more memories here." in shown and "more memories not shown." in shown
    assert memory_blocks([], lambda m: True) == []
    # What the rest of the tab leaves: no more, and nothing when too little is left.
    squeezed = memory_blocks(memories, lambda m: True, room=10)
    assert len(squeezed) <= 10 and "more memories not shown." in text_of({"blocks": squeezed})
    assert memory_blocks(memories, lambda m: True, room=3) == []


@pytest.mark.parametrize(
    "value", [None, 12, "", "C1/", "C1/12/3", "c1/12", "C1/1e3", "C1/" + "9" * 13]
)
def test_a_button_or_modal_that_names_no_memory_is_none(value):
    assert target(value) is None
    assert target("C0PUBLIC01/12") == ("C0PUBLIC01", 12) and target("*/3") == ("*", 3)
