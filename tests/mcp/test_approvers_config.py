"""The MCP file's approvers and approvals channel (docs/configuration.md#approvers): parsed to
what the run reads, and every bad value named with where it is."""

from __future__ import annotations

import pytest

from assistant.mcp.config import parse_servers


def test_approvers_and_the_approvals_channel_are_read():
    document = {
        "servers": {
            "shop": {
                "url": "https://shop.example/mcp",
                "approvers": {"cancel_order": "editors", "refund": {"usergroup": "S0FINANCE"}},
                "approvals_channel": "C0OPS",
            },
            "docs": {"url": "https://docs.example/mcp"},
        }
    }
    shop, docs = parse_servers(document, environ={})
    assert shop.approvers == {"cancel_order": "editors", "refund": "usergroup:S0FINANCE"}
    assert shop.approvals_channel == "C0OPS"
    assert (docs.approvers, docs.approvals_channel) == ({}, None)  # the asker, in the thread


@pytest.mark.parametrize(
    ("server", "where"),
    [
        ({"approvers": {"x": "admins"}}, "servers.shop.approvers.x"),
        ({"approvers": {"x": {"usergroup": "U0PERSON"}}}, "servers.shop.approvers.x"),
        ({"approvers": {"x": {"usergroup": "S0A", "more": 1}}}, "servers.shop.approvers.x"),
        ({"approvals_channel": "#ops"}, "servers.shop.approvals_channel"),
    ],
)
def test_a_bad_approver_or_channel_is_named(server, where):
    document = {"servers": {"shop": {"url": "https://shop.example/mcp", **server}}}
    with pytest.raises(ValueError, match=r"servers\.shop\.approv") as raised:
        parse_servers(document, environ={})
    assert all(line.startswith(where) for line in str(raised.value).splitlines())
