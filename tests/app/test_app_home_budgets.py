"""Spend limits in the App Home (docs/operations.md#spend-limits): an admin sets a channel's
and the workspace default's daily and monthly budgets in the settings modal (dollars, tokens or
both); an editor's modal has no budget inputs and a forged submission of them is refused; a
value that is not an amount is shown under its input."""

from __future__ import annotations

import pytest

from assistant.fakes import ids
from assistant.fakes.events.home import view_submission
from assistant.fakes.slack.blocks import view_problems
from assistant.panel.home_views import BUDGETS_ADMINS_ONLY, edit_modal, summary
from context.channels import WORKSPACE_DEFAULT, ChannelConfig
from tests.app.test_app_home import EDITOR, configure, kept, open_home, open_modal
from tests.app.test_channel_settings import ADMIN, interact

pytestmark = [pytest.mark.app_backend, pytest.mark.listeners]

SHARED = "C0SHARED01"  # the editor is in it


def typed(text: str) -> dict:
    return {"type": "plain_text_input", "value": text}


def test_an_admin_sets_budgets_in_the_modal_and_an_editor_cannot(app, slack, model):
    slack.add_user(ADMIN, "ada", is_admin=True)
    slack.add_user(EDITOR, "eddie")
    configure(app, WORKSPACE_DEFAULT, editors=(EDITOR,))
    configure(app, ids.CHANNEL_ID, model="gpt-4o-mini")
    modal = open_modal(app, slack, open_home(app, slack, ADMIN), ids.CHANNEL_ID, ADMIN)
    values = {"daily_budget": typed("$5"), "monthly_budget": typed("100, 2M tokens")}
    assert interact(app, view_submission(slack, modal, values, user=ADMIN)) == (200, {})
    saved = kept(app, ids.CHANNEL_ID)
    assert (saved.daily_budget, saved.monthly_budget, saved.monthly_token_budget) == (
        5.0, 100.0, 2_000_000,
    )  # fmt: skip
    assert saved.updated_by == ADMIN  # told at 80%
    # Shown again as typed back, and in the home tab's summary.
    again = open_modal(app, slack, slack.home_tabs[ADMIN], ids.CHANNEL_ID, ADMIN)
    inputs = {b["block_id"]: b["element"] for b in again["blocks"] if b.get("type") == "input"}
    assert inputs["monthly_budget"]["initial_value"] == "100, 2000000 tokens"
    assert "daily budget $5; monthly budget $100, 2000000 tokens" in summary(saved)

    status, answer = interact(
        app, view_submission(slack, modal, {"daily_budget": typed("lots")}, user=ADMIN)
    )
    assert status == 200 and answer["errors"]["daily_budget"].startswith("'lots' is not an amount")

    # The editor's modal has none; a submission of them (forged) is refused.
    mine = open_modal(app, slack, open_home(app, slack, EDITOR), WORKSPACE_DEFAULT, EDITOR)
    assert not {"daily_budget", "monthly_budget"} & {b.get("block_id") for b in mine["blocks"]}
    slack.conversations.public(SHARED, [EDITOR], name="shared")
    configure(app, SHARED, model="gpt-4o-mini")
    admins = open_modal(app, slack, open_home(app, slack, ADMIN), SHARED, ADMIN)
    status, answer = interact(
        app, view_submission(slack, admins, {"daily_budget": typed("1000")}, user=EDITOR)
    )
    assert answer == {"response_action": "errors", "errors": {"daily_budget": BUDGETS_ADMINS_ONLY}}
    assert kept(app, SHARED).daily_budget is None


def test_the_modal_with_the_largest_budgets_is_one_slack_takes():
    config = ChannelConfig(
        team=ids.TEAM_ID,
        channel=ids.CHANNEL_ID,
        daily_budget=1_000_000,
        monthly_budget=0.000001,
        daily_token_budget=10**12,
        monthly_token_budget=10**12,
    )
    assert view_problems(edit_modal(ids.CHANNEL_ID, config, {}, admin=True)) == []
