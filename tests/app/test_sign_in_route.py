"""The sign-in callback route of `assistant serve` (/mcp/oauth/callback), over real HTTP on
loopback: what a browser that anyone may point at it gets. The flow behind it (the state's
checks, the exchange, the run resumed) is tests/mcp/test_sign_in.py's and
tests/app/test_mcp_sign_in.py's."""

from __future__ import annotations

import json

from cryptography.fernet import Fernet

from assistant.intake.sign_ins import UNKNOWN_PAGE

CALLBACK = "/mcp/oauth/callback"


def test_a_forged_state_is_refused_and_the_page_is_never_cached(make_app, tmp_path):
    path = tmp_path / "mcp.json"
    # No server needs to answer: the state is checked against the store before anything else.
    path.write_text(
        json.dumps({"servers": {"ids": {"url": "http://127.0.0.1:9/mcp", "auth": "user"}}})
    )
    app = make_app(
        assistant_mcp_file=str(path),
        assistant_secret_key=Fernet.generate_key().decode(),
        assistant_public_url="https://aya.example.com",
    )
    for query in ("?state=forged&code=abc", "?state=&error=access_denied", ""):
        response = app.request("GET", CALLBACK + query)
        assert response.status == 400, query
        assert response.body.decode() == UNKNOWN_PAGE + "\n"
        headers = {k.lower(): v for k, v in response.headers.items()}
        assert headers["cache-control"] == "no-store", headers
        assert headers["referrer-policy"] == "no-referrer"
    assert app.request("POST", CALLBACK + "?state=forged").status == 405


def test_without_a_server_that_signs_people_in_the_route_is_not_found(make_app):
    response = make_app().request("GET", CALLBACK + "?state=anything&code=abc")
    assert response.status == 404
    assert response.body == b"No MCP server signs people in here.\n"
