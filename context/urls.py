"""URLs as output shows them: where a thing is, never who may use it. A URL's user name,
password, path and query may hold credentials (a collector's `https://user:key@…`, a
database's `?password=`, a token in a path), so what is printed or logged is its scheme, host
and port only; a SQLite URL's file, which is its whole location and holds no credential, is
kept."""

from __future__ import annotations

from urllib.parse import urlsplit


def shown_url(url: object) -> str:
    """`url` (a string, or anything whose `str` is one, such as SQLAlchemy's URL, which hides
    its password there) as `scheme://host:port`; a bare `host:port` (a gRPC endpoint) stays
    bare."""
    text = str(url).strip()
    bare = "://" not in text
    try:
        parts = urlsplit(f"//{text}" if bare else text)
        port = parts.port
    except ValueError:  # not a URL at all (a port that is no number, a broken IPv6 host)
        return "(a URL that does not parse)"
    scheme = parts.scheme.lower()
    if scheme.startswith("sqlite"):
        return f"{scheme}://{parts.path}"
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"  # IPv6
    where = f"{host}:{port}" if port is not None else host
    return where if bare else f"{scheme}://{where}"
