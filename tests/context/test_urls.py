"""`shown_url`: the one way a URL reaches output, with where it is and nothing of who may use
it (no user, password, path or query)."""

from __future__ import annotations

import pytest
from sqlalchemy import make_url

from context.urls import shown_url


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://aya:key@collector.example:4318/v1/traces?token=t", "https://collector.example:4318"),
        ("http://collector:4318", "http://collector:4318"),
        ("aya:key@collector:4317", "collector:4317"),  # a bare gRPC endpoint stays bare
        ("https://slack.com/api/", "https://slack.com"),
        ("http://[::1]:8080/v1", "http://[::1]:8080"),
        ("postgresql://aya:pw@db.internal/aya?password=pw", "postgresql://db.internal"),
        (make_url("postgresql+psycopg://aya:pw@db:5433/aya"), "postgresql+psycopg://db:5433"),
        ("sqlite:///assistant.db", "sqlite:///assistant.db"),  # a file: its whole location
        ("sqlite:////var/lib/aya/store.db?mode=ro", "sqlite:////var/lib/aya/store.db"),
        ("http://aya:key@host:port/", "(a URL that does not parse)"),
    ],
)  # fmt: skip
def test_a_url_is_shown_as_its_scheme_host_and_port(url, shown):
    assert shown_url(url) == shown
