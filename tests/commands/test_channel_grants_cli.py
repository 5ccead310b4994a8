"""`assistant channels grants TEAM CHANNEL [--all] [--revoke ID]`: a channel's grants listed,
one revoked (recorded in the thread where it was given), and one-line errors (exit status 2)."""

from __future__ import annotations

from context.entry import now_timestamp
from context.storage import ThreadKey, open_store
from tests.cli import run_cli

KEY = ThreadKey("T1", "C1", "1700000000.000100")


def seeded(url: str) -> None:
    store = open_store(url)
    try:
        store.append(KEY, "You are helpful.", now_timestamp())  # the thread where it was given
        store.give_grant("T1", "C1", "shop", "cancel_order", "U1", "U1", KEY.thread_ts)
        store.give_grant("T1", "C1", "shop", "refund", None, "U2", KEY.thread_ts)
        store.give_grant("T1", "C2", "shop", "cancel_order", "U1", "U1", "1700000001.000100")
    finally:
        store.close()


def test_list_then_revoke_one_which_its_thread_records(store_url):
    seeded(store_url)
    env = {"DATABASE_URL": store_url}
    listed = run_cli("channels", "grants", "T1", "C1", env=env)
    assert listed.returncode == 0, listed.stderr
    lines = [line.split("\t") for line in listed.stdout.decode().splitlines()]
    assert [line[:3] for line in lines] == [
        ["1", "shop__cancel_order", "for U1"],
        ["2", "shop__refund", "for everyone"],
    ]

    revoked = run_cli("channels", "grants", "T1", "C1", "--revoke", "2", env=env)
    assert revoked.returncode == 0, revoked.stderr
    assert "\trevoked by the operator " in revoked.stdout.decode()
    after = run_cli("channels", "grants", "T1", "C1", env=env).stdout.decode().splitlines()
    assert [line.split("\t")[0] for line in after] == ["1"]
    every = run_cli("channels", "grants", "T1", "C1", "--all", env=env).stdout.decode()
    assert len(every.splitlines()) == 2

    store = open_store(store_url)
    try:
        last = store.entries(KEY)[-1].content
        assert store.grant_covering("T1", "C1", "shop", "refund", "U9") is None
    finally:
        store.close()
    assert isinstance(last, str) and last.startswith("Grant 2 revoked by the operator ")
    assert last.endswith(": shop__refund asks again for everyone in this channel.")


def test_a_grant_not_in_force_in_the_channel_is_a_one_line_error(store_url):
    seeded(store_url)
    env = {"DATABASE_URL": store_url}
    for grant in ("3", "99"):  # another channel's; none
        result = run_cli("channels", "grants", "T1", "C1", "--revoke", grant, env=env)
        assert result.returncode == 2
        assert (
            result.stderr.decode().splitlines()[-1].endswith(f"no grant {grant} in force in T1 C1")
        )
    bad = run_cli("channels", "grants", "T1", "C1;x", env=env)
    assert bad.returncode == 2 and b"is not a Slack id" in bad.stderr
