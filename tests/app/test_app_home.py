"""The App Home with many channels and people who should not see everything, its events
dispatched to the app's Bolt app (docs/configuration.md, "Configuring channels"): its views
keep within Slack's Block Kit limits (the fake refuses what Slack refuses), a page at a time;
a channel's settings are shown to its members and the admins only; saving the modal keeps what
it does not show; only admins name editors."""

from __future__ import annotations

import pytest

from assistant.fakes import ids
from assistant.fakes.events.home import app_home_opened, home_click, view_submission
from assistant.fakes.slack.blocks import view_problems
from assistant.panel.home import NOT_IN_CHANNEL
from assistant.panel.home_views import (
    ADMINS_ONLY,
    EDIT_ACTION,
    PAGE_ACTION,
    PAGE_SIZE,
    edit_modal,
    home_view,
)
from context.channels import WORKSPACE_DEFAULT, ChannelConfig
from tests.app.test_channel_settings import ADMIN, BOB, buttons, interact, text_of

# How requests are handled, not served: the Bolt tier (tests/bolt_tier.py).
pytestmark = [pytest.mark.app_backend, pytest.mark.listeners]

EDITOR = "U0EDITOR01"
SECRET = "C0SECRET01"  # private: BOB and the bot
PUBLIC = "C0PUBLIC01"  # public: the default person and the bot


def kept(app, channel: str) -> ChannelConfig:
    return app.assistant.store.channel_config(ids.TEAM_ID, channel)


def configure(app, channel: str, **fields: object) -> None:
    app.assistant.store.set_channel_config(
        ChannelConfig(team=ids.TEAM_ID, channel=channel, **fields)
    )


def click(app, slack, view: dict, action: str, value: str, user: str) -> None:
    status, _ = interact(app, home_click(slack, view, action, value, user=user))
    assert status == 200


def open_home(app, slack, user: str) -> dict:
    """The home tab `user` is shown on opening it (Slack took it: else the test fails with
    what Slack said)."""
    before = len(slack.calls_to("views.publish"))
    assert app.send_event(app_home_opened(user=user)).status == 200
    (published,) = slack.wait_for_call("views.publish", count=before + 1)[before:]
    assert published.response["ok"], published.response
    return slack.home_tabs[user]


def turn_page(app, slack, tab: dict, page: int, user: str) -> dict:
    before = len(slack.calls_to("views.publish"))
    click(app, slack, tab, PAGE_ACTION, str(page), user)
    (published,) = slack.wait_for_call("views.publish", count=before + 1)[before:]
    assert published.response["ok"], published.response
    return slack.home_tabs[user]


def open_modal(app, slack, tab: dict, channel: str, user: str) -> dict:
    before = len(slack.calls_to("views.open"))
    click(app, slack, tab, EDIT_ACTION, channel, user)
    (opened,) = slack.wait_for_call("views.open", count=before + 1)[before:]
    assert opened.response["ok"], opened.response
    return slack.modals[-1]


def test_a_workspace_of_many_channels_people_and_personas_fits_slack_s_limits(
    make_app, slack, model, tmp_path
):
    personas = tmp_path / "personas.yaml"
    names = [f"persona{n:03d}" for n in range(120)] + ["p" * 100]
    personas.write_text("".join(f"{name}: You are {name}.\n" for name in names))
    app = make_app(assistant_personas_file=str(personas))
    slack.add_user(ADMIN, "ada", is_admin=True)
    people = tuple(f"U{n:09d}" for n in range(120))
    channels = [f"C{n:09d}" for n in range(120)]
    configure(app, WORKSPACE_DEFAULT, editors=people, model="gpt-default")
    long_persona = "You are thorough. " * 534  # 9,612 characters
    for n, channel in enumerate(channels):
        persona = long_persona if n == 0 else f"Persona of channel {n}."
        configure(app, channel, persona=persona, access="listed", users=people)

    # Every channel on one of the pages, each page within Slack's limits (the fake refuses
    # what Slack refuses: 123 blocks on one page, a 4,520-character section, before).
    tab = open_home(app, slack, ADMIN)
    assert len(tab["blocks"]) <= 100
    listed = buttons(tab)
    page = 0
    while "Next page" in text_of(tab):
        page += 1
        tab = turn_page(app, slack, tab, page, ADMIN)
        listed += [b for b in buttons(tab) if b not in ("*", "")]
    assert page == 2 and sorted(set(listed)) == sorted(["*", "", *channels])
    assert f"Channels {2 * PAGE_SIZE + 1} to 120 of 120." in text_of(tab)
    assert "and 110 more" in text_of(tab)  # the allow-list of 120 people, counted
    assert "Next page" not in text_of(tab) and "Previous page" in text_of(tab)
    back = turn_page(app, slack, turn_page(app, slack, tab, 1, ADMIN), 0, ADMIN)
    assert buttons(back)[1] == channels[0] and "Previous page" not in text_of(back)

    # The modal of the channel with a 9,612-character persona: the persona is kept, not put
    # in a text input that holds 3,000; all 121 personas offered, in groups of at most 100.
    modal = open_modal(app, slack, back, channels[0], ADMIN)
    assert "9,612 characters" in text_of(modal)
    (named,) = [b["element"] for b in modal["blocks"] if b.get("block_id") == "persona_name"]
    offered = [o["value"] for group in named["option_groups"] for o in group["options"]]
    assert offered == ["inherit", *sorted(names)]
    values = {"model": {"type": "plain_text_input", "value": "gpt-other"}}
    status, answer = interact(app, view_submission(slack, modal, values, user=ADMIN))
    assert (status, answer) == (200, {})
    saved = kept(app, channels[0])
    assert (saved.persona, saved.model, saved.users) == (long_persona, "gpt-other", people)

    # The default's modal names 120 editors; the named persona of 100 characters is chosen.
    modal = open_modal(app, slack, slack.home_tabs[ADMIN], WORKSPACE_DEFAULT, ADMIN)
    chosen = {"type": "static_select", "selected_option": {"value": "p" * 100}}
    status, answer = interact(
        app, view_submission(slack, modal, {"persona_name": chosen}, user=ADMIN)
    )
    assert (status, answer) == (200, {})
    default = kept(app, WORKSPACE_DEFAULT)
    assert (default.persona_name, default.editors, default.model) == (
        "p" * 100,
        people,
        "gpt-default",
    )


def test_a_channel_s_settings_are_shown_to_its_members_and_the_admins_only(app, slack, model):
    slack.add_user(ADMIN, "ada", is_admin=True)
    slack.add_user(BOB, "bob")
    slack.conversations.private(SECRET, [BOB], name="secret")
    slack.conversations.public(PUBLIC, [ids.USER_ID], name="public")
    configure(app, WORKSPACE_DEFAULT, persona="Be kind.")
    configure(app, SECRET, persona="The secret plans.", access="listed", users=(BOB,))
    configure(app, PUBLIC, persona="The public rules.")

    mine = text_of(open_home(app, slack, ids.USER_ID))
    assert "Be kind." in mine and "The public rules." in mine
    assert "secret plans" not in mine and BOB not in mine and SECRET not in mine
    assert "1 more channel has settings shown only to its members" in mine
    bobs = text_of(open_home(app, slack, BOB))
    assert "The secret plans." in bobs and "public rules" not in bobs
    admins = text_of(open_home(app, slack, ADMIN))
    assert "The secret plans." in admins and "The public rules." in admins
    assert "more channel" not in admins

    # Slack cannot say which channels someone is in: they see less, never more.
    slack.fail("users.conversations", "internal_error")
    unsure = text_of(open_home(app, slack, ids.USER_ID))
    assert "Be kind." in unsure and "public rules" not in unsure and "secret" not in unsure
    assert "2 more channels have settings" in unsure
    assert "Slack could not say which channels you are in" in unsure
    assert "could not say" not in text_of(open_home(app, slack, ids.USER_ID))  # asked again


def test_an_editor_sees_and_changes_only_the_channels_they_are_in(app, slack, model):
    slack.add_user(ADMIN, "ada", is_admin=True)
    slack.add_user(EDITOR, "eddie")
    slack.conversations.private(SECRET, [BOB], name="secret")
    configure(app, WORKSPACE_DEFAULT, editors=(EDITOR,))
    configure(app, SECRET, persona="The secret plans.")
    admins_tab = open_home(app, slack, ADMIN)
    assert buttons(open_home(app, slack, EDITOR)) == ["*", ""]

    # A forged click on the secret channel's Edit (the editor's tab has none): no modal.
    opened = len(slack.calls_to("views.open"))
    click(app, slack, admins_tab, EDIT_ACTION, SECRET, EDITOR)
    app.wait_handled()
    assert len(slack.calls_to("views.open")) == opened
    # A forged submission for it: refused, nothing changed.
    modal = open_modal(app, slack, admins_tab, SECRET, ADMIN)
    values = {"persona": {"type": "plain_text_input", "value": "Leak everything."}}
    status, answer = interact(app, view_submission(slack, modal, values, user=EDITOR))
    assert (status, answer) == (
        200,
        {"response_action": "errors", "errors": {"persona": NOT_IN_CHANNEL}},
    )
    assert kept(app, SECRET).persona == "The secret plans."


def test_saving_a_channel_in_the_app_home_keeps_what_the_modal_does_not_show(app, slack, model):
    slack.add_user(ADMIN, "ada", is_admin=True)
    icon = "https://icons.example/ship.png"
    configure(app, ids.CHANNEL_ID, username="Captain", icon_url=icon, persona="Arr.")
    modal = open_modal(app, slack, open_home(app, slack, ADMIN), ids.CHANNEL_ID, ADMIN)
    values = {"model": {"type": "plain_text_input", "value": "gpt-pirate"}}
    status, answer = interact(app, view_submission(slack, modal, values, user=ADMIN))
    assert (status, answer) == (200, {})
    saved = kept(app, ids.CHANNEL_ID)
    assert (saved.icon_url, saved.username, saved.persona, saved.model) == (
        icon, "Captain", "Arr.", "gpt-pirate",
    )  # fmt: skip

    # An emoji chosen in the modal replaces the icon it did not show (a post has one icon).
    modal = open_modal(app, slack, slack.home_tabs[ADMIN], ids.CHANNEL_ID, ADMIN)
    values = {"icon_emoji": {"type": "plain_text_input", "value": ":ship:"}}
    status, answer = interact(app, view_submission(slack, modal, values, user=ADMIN))
    assert (status, answer) == (200, {})
    saved = kept(app, ids.CHANNEL_ID)
    assert (saved.icon_emoji, saved.icon_url, saved.model) == (":ship:", None, "gpt-pirate")


def test_only_admins_name_editors(app, slack, model):
    slack.add_user(ADMIN, "ada", is_admin=True)
    slack.add_user(EDITOR, "eddie")
    configure(app, WORKSPACE_DEFAULT, editors=(EDITOR, BOB))
    admins_modal = open_modal(app, slack, open_home(app, slack, ADMIN), WORKSPACE_DEFAULT, ADMIN)
    assert "editors" in [b.get("block_id") for b in admins_modal["blocks"]]

    # The editor's modal of the default has no editors input; saving it keeps them.
    modal = open_modal(app, slack, open_home(app, slack, EDITOR), WORKSPACE_DEFAULT, EDITOR)
    assert "editors" not in [b.get("block_id") for b in modal["blocks"]]
    values = {"model": {"type": "plain_text_input", "value": "gpt-team"}}
    status, answer = interact(app, view_submission(slack, modal, values, user=EDITOR))
    assert (status, answer) == (200, {})
    assert (kept(app, WORKSPACE_DEFAULT).model, kept(app, WORKSPACE_DEFAULT).editors) == (
        "gpt-team", (EDITOR, BOB),
    )  # fmt: skip

    # An editor's submission naming editors (forged from an admin's modal) is refused.
    mallory = {"type": "multi_users_select", "selected_users": [EDITOR, "U0MALLORY1"]}
    status, answer = interact(
        app, view_submission(slack, admins_modal, {"editors": mallory}, user=EDITOR)
    )
    assert (status, answer) == (
        200,
        {"response_action": "errors", "errors": {"editors": ADMINS_ONLY}},
    )
    assert kept(app, WORKSPACE_DEFAULT).editors == (EDITOR, BOB)

    # An admin names them.
    only = {"type": "multi_users_select", "selected_users": [EDITOR]}
    status, answer = interact(
        app, view_submission(slack, admins_modal, {"editors": only}, user=ADMIN)
    )
    assert (status, answer) == (200, {})
    assert kept(app, WORKSPACE_DEFAULT).editors == (EDITOR,)


def test_the_views_of_the_largest_settings_the_store_takes_are_ones_slack_takes():
    # Every field at its most (ChannelConfig's limits), many people and groups, personas
    # beyond what one select holds: each view still within Block Kit's limits.
    people = tuple(f"U{n:09d}" for n in range(1000))
    groups = tuple(f"S{n:09d}" for n in range(1000))
    biggest = {
        "persona": "p" * 20_000, "model": "m" * 100, "access": "listed", "users": people,
        "groups": groups, "username": "u" * 80, "icon_url": "https://icons.example/" + "i" * 2000,
    }  # fmt: skip
    configs = [ChannelConfig(team=ids.TEAM_ID, channel="*", editors=people, **biggest)]
    configs += [ChannelConfig(team=ids.TEAM_ID, channel=f"C{n:09d}", **biggest) for n in range(250)]
    personas = {f"{n:0100d}": "text" for n in range(10_500)}
    for page in range(8):
        for may_edit in (True, False):
            view = home_view(configs, may_edit, page, hidden=3, unsure=True)
            assert view_problems(view) == []
    for config in configs[:2]:
        for admin in (True, False):
            for offered in (personas, dict(list(personas.items())[:150]), {}):
                assert view_problems(edit_modal(config.channel, config, offered, admin)) == []
    assert view_problems(edit_modal("", None, personas)) == []
