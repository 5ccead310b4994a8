"""Channel settings: the values (`context.channels`) and their store (`ChannelStore`), on
SQLite and PostgreSQL."""

from __future__ import annotations

import threading

import pytest
from pydantic import ValidationError

from context.channels import ChannelConfig, may_use, merged
from context.storage import ModelRefusal


def test_settings_are_kept_whole_replaced_and_listed_by_team(store):
    assert store.channel_config("T1", "C1") is None
    first = store.set_channel_config(
        ChannelConfig(team="T1", channel="C1", persona="You are a pirate.", model="gpt-x")
    )
    assert first.updated_at is not None
    store.set_channel_config(ChannelConfig(team="T1", channel="*", enabled=True, editors=("U9",)))
    store.set_channel_config(ChannelConfig(team="T2", channel="C7", enabled=False))
    # Replaced whole: what the new settings leave unset is unset, not the old value.
    store.set_channel_config(ChannelConfig(team="T1", channel="C1", persona_name="pirate"))
    kept = store.channel_config("T1", "C1")
    assert (kept.persona, kept.persona_name, kept.model) == (None, "pirate", None)
    assert [(c.team, c.channel) for c in store.channel_configs()] == [
        ("T1", "*"),
        ("T1", "C1"),
        ("T2", "C7"),
    ]
    assert [c.channel for c in store.channel_configs("T2")] == ["C7"]


def test_a_model_refusal_is_kept_per_channel_until_that_model_is_served_there(store):
    first = ModelRefusal("T1", "C1", "gpt-x", "HTTP 404, model_not_found", "2026-11-26T10:00Z")
    store.refuse_model(first)
    later = ModelRefusal("T1", "C1", "gpt-y", "HTTP 400", "2026-11-26T11:00Z")
    store.refuse_model(later)  # the latest there replaces it
    store.refuse_model(ModelRefusal("T2", "C7", "gpt-x", "HTTP 404", "2026-11-26T12:00Z"))
    assert store.model_refusals() == [
        later,
        ModelRefusal("T2", "C7", "gpt-x", "HTTP 404", "2026-11-26T12:00Z"),
    ]
    assert store.model_refusals("T1") == [later]
    store.model_served("T1", "C1", "gpt-x")  # another model served: the refusal stays
    assert store.model_refusals("T1") == [later]
    store.model_served("T1", "C1", "gpt-y")
    assert store.model_refusals("T1") == []


def test_the_settings_in_force_are_the_workspace_default_and_the_channels_own(store):
    assert store.channel_configs_in_force("T1", "C1") == (None, None)
    store.set_channel_config(ChannelConfig(team="T1", channel="C1", model="m1"))
    store.set_channel_config(ChannelConfig(team="T2", channel="*", model="other team"))
    store.set_channel_config(ChannelConfig(team="T1", channel="C2", model="other channel"))
    default, own = store.channel_configs_in_force("T1", "C1")
    assert default is None and own == store.channel_config("T1", "C1")
    store.set_channel_config(ChannelConfig(team="T1", channel="*", model="m0"))
    default, own = store.channel_configs_in_force("T1", "C1")
    assert (default.model, own.model) == ("m0", "m1")
    assert store.channel_configs_in_force("T1", "C9")[1] is None


def test_a_channel_falls_back_to_its_workspace_default_field_by_field():
    default = ChannelConfig(
        team="T1", channel="*", persona="Default.", model="m1", access="listed", users=("U1",)
    )
    channel = ChannelConfig(team="T1", channel="C1", persona_name="pirate", enabled=False)
    values = merged(default, channel)
    assert values["persona"] is None and values["persona_name"] == "pirate"
    assert (values["model"], values["enabled"], values["access"]) == ("m1", False, "listed")
    assert values["users"] == ("U1",)
    assert merged(None, None)["enabled"] is None


def test_who_may_use_it():
    assert may_use(None, (), "U1", False)
    assert may_use("everyone", (), "U1", False)
    assert not may_use("listed", ("U2",), "U1", False)
    assert may_use("listed", ("U1",), "U1", False)
    assert may_use("listed", (), "U1", True)


@pytest.mark.parametrize(
    "values",
    [
        {"persona": "a", "persona_name": "b"},
        {"icon_emoji": "robot"},
        {"icon_emoji": ":a:", "icon_url": "https://x/y.png"},
        {"users": ("not an id",)},
        {"access": "some"},
        {"colour": "red"},
    ],
)
def test_wrong_settings_are_refused(values):
    with pytest.raises(ValidationError):
        ChannelConfig(team="T1", channel="C1", **values)


def test_saves_of_one_channel_at_once_each_keep_one_whole_row(store):
    # Two admins saving one channel at the same moment: each save is kept whole (the last
    # one wins), neither fails (on PostgreSQL, a delete-then-insert lost the race with a
    # unique violation).
    saves_each, savers = 25, 4
    start = threading.Barrier(savers)
    failures: list[BaseException] = []

    def save(who: int) -> None:
        start.wait(timeout=60)
        for n in range(saves_each):
            config = ChannelConfig(team="T1", channel="C1", model=f"m{who}-{n}", updated_by="U1")
            try:
                store.set_channel_config(config)
            except Exception as exc:  # every failure is the finding
                failures.append(exc)

    threads = [threading.Thread(target=save, args=(who,)) for who in range(savers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert failures == []
    (kept,) = store.channel_configs("T1")
    assert kept.model in {f"m{who}-{saves_each - 1}" for who in range(savers)}
