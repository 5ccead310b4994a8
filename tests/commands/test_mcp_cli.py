"""`assistant mcp connections`: people's sign-ins listed without a secret, and one revoked
(at the SDK's own authorization server on loopback, tests/mcp_servers/identity.py)."""

from __future__ import annotations

import asyncio
import json

from cryptography.fernet import Fernet

from assistant.mcp.config import parse_servers
from assistant.mcp.signin.sealing import Sealer
from assistant.mcp.signin.tokens import SignIns
from context.storage import open_store
from tests.cli import run_cli
from tests.mcp.test_sign_in import KEY, PUBLIC, connect
from tests.mcp_servers.identity import IdentityServer


def test_connections_are_listed_without_secrets_and_one_is_revoked(tmp_path):
    url = f"sqlite:///{tmp_path / 'store.db'}"
    secret = Fernet.generate_key().decode()
    with IdentityServer() as server:
        mcp_file = tmp_path / "mcp.json"
        mcp_file.write_text(json.dumps({"servers": {"ids": {"url": server.url, "auth": "user"}}}))
        store = open_store(url)
        try:
            configs = parse_servers(json.loads(mcp_file.read_text()))
            sign_ins = SignIns(store, Sealer(secret), PUBLIC, configs)
            asyncio.run(connect(sign_ins, "UALICE", "alice"))
            asyncio.run(connect(sign_ins, "UBOB", "bob"))
        finally:
            store.close()
        env = {
            "DATABASE_URL": url,
            "ASSISTANT_MCP_FILE": str(mcp_file),
            "ASSISTANT_SECRET_KEY": secret,
            "ASSISTANT_PUBLIC_URL": PUBLIC,
        }
        listed = run_cli("mcp", "connections", env=env)
        assert listed.returncode == 0, listed.stderr
        lines = listed.stdout.decode().splitlines()
        assert [line.split("\t")[:3] for line in lines] == [
            [KEY.team, "UALICE", "ids"],
            [KEY.team, "UBOB", "ids"],
        ]
        tokens = [*server.provider.access, *server.provider.refresh]
        everything = listed.stdout + listed.stderr
        assert not any(token.encode() in everything for token in tokens)

        revoked = run_cli("mcp", "connections", "--revoke", KEY.team, "UALICE", "ids", env=env)
        assert revoked.returncode == 0, revoked.stderr
        assert revoked.stdout.decode().strip().endswith("revoked at the server")
        assert "alice" in server.provider.revoked
        listed = run_cli("mcp", "connections", KEY.team, env=env)
        assert [line.split("\t")[1] for line in listed.stdout.decode().splitlines()] == ["UBOB"]

        again = run_cli("mcp", "connections", "--revoke", KEY.team, "UALICE", "ids", env=env)
        assert again.returncode == 2
        assert again.stderr.decode().strip().endswith("UALICE in T1 has no connection to ids")
        bad = run_cli("mcp", "connections", "--revoke", "t1", "U;rm", "ids", env=env)
        assert bad.returncode == 2 and bad.stderr.decode().count("\n") == 1
