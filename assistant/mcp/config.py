"""The servers of ASSISTANT_MCP_FILE, checked: every problem named, with where it is, in one
list, so that the start message says them all at once."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, model_validator

# A server's name is the prefix of its tools' names (`context.toolcalls.SERVER_TOOL`): no `_`,
# so that the first `__` of a tool's name ends it.
SERVER_NAME = re.compile(r"^[A-Za-z0-9-]{1,32}$")
_ENV_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
MAX_SERVERS = 50

Approval = Literal["never", "always"]
# Who may allow a call that waits (docs/configuration.md#approvers): the person who asked, the
# channel's editors, or the members of a user group ("usergroup:S…" once parsed).
Approvers = Literal["asker", "editors"]
_CHANNEL = r"^[CG][A-Z0-9]{2,}$"


class UserGroupApprovers(BaseModel):
    """`{usergroup: S…}`: the members of a Slack user group decide."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    usergroup: str = Field(pattern=r"^S[A-Z0-9]{2,}$")


# How the app reaches a server: `headers` (today's: the static headers the file gives, one
# identity for all), `user` (each person signs in, and their calls carry their own token:
# assistant/mcp/signin/) or `deployment` (an admin signs in once with `assistant mcp login`,
# and every call carries that one token).
Auth = Literal["headers", "user", "deployment"]
_SCOPE = re.compile(r"^[\x21\x23-\x5b\x5d-\x7e]{1,200}$")  # RFC 6749's scope-token
ToolName = Annotated[str, Field(min_length=1, max_length=128)]


class ServerEntry(BaseModel):
    """One server as the file writes it."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    url: str | None = None
    command: Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1)] | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    include: list[ToolName] | None = None
    exclude: list[ToolName] = Field(default_factory=list)
    approve: dict[ToolName, Approval] = Field(default_factory=dict)
    approvers: dict[ToolName, Approvers | UserGroupApprovers] = Field(default_factory=dict)
    # Where the requests of this server's tools are posted (an ops channel), with a link
    # back to the thread; None: in the thread.
    approvals_channel: str | None = Field(default=None, pattern=_CHANNEL)
    auth: Auth = "headers"
    # A client the server's authorization server knows already (else one is registered with
    # it, RFC 7591); its secret only ever named by an environment variable.
    client_id: Annotated[str, Field(min_length=1, max_length=512)] | None = None
    client_secret_env: Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")] | None = None
    scopes: list[Annotated[str, Field(pattern=_SCOPE.pattern)]] | None = None

    @model_validator(mode="after")
    def _one_way_in(self) -> ServerEntry:
        if (self.url is None) == (self.command is None):
            raise ValueError("give either url (streamable HTTP) or command (stdio), not both")
        if self.url is not None:
            parts = urlsplit(self.url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise ValueError("url must be an http:// or https:// URL with a host")
        if self.headers and self.url is None:
            raise ValueError("headers go with a url only")
        if self.auth != "headers":
            if self.url is None:
                raise ValueError(f"auth: {self.auth} goes with a url only (a sign-in is over HTTP)")
            if self.headers:
                raise ValueError(
                    f"auth: {self.auth} takes no headers: each call carries its signed-in token"
                )
        elif self.client_id or self.client_secret_env or self.scopes is not None:
            raise ValueError(
                "client_id, client_secret_env and scopes go with auth: user or deployment only"
            )
        if self.client_secret_env and not self.client_id:
            raise ValueError("client_secret_env goes with a client_id")
        return self


class McpFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    servers: Annotated[dict[str, ServerEntry], Field(max_length=MAX_SERVERS)]


@dataclass(frozen=True)
class ServerConfig:
    """One server, ready to connect to: its headers' `${VAR}`s read from the environment
    (secrets: never printed, and kept out of `repr`)."""

    name: str
    url: str | None = None
    command: tuple[str, ...] = ()
    headers: Mapping[str, SecretStr] = field(default_factory=dict, repr=False)
    include: frozenset[str] | None = None
    exclude: frozenset[str] = frozenset()
    approve: Mapping[str, Approval] = field(default_factory=dict)
    approvers: Mapping[str, str] = field(default_factory=dict)  # "editors", "usergroup:S…"
    approvals_channel: str | None = None
    auth: Auth = "headers"
    client_id: str | None = None
    client_secret: SecretStr | None = field(default=None, repr=False)
    scopes: tuple[str, ...] | None = None

    @property
    def per_person(self) -> bool:
        """Whether each person signs in (`auth: user`)."""
        return self.auth == "user"

    @property
    def deployment(self) -> bool:
        """Whether one sign-in serves every call (`auth: deployment`, `assistant mcp login`)."""
        return self.auth == "deployment"

    @property
    def signs_in(self) -> bool:
        """Whether its calls carry a token of a sign-in (a person's, or the deployment's)."""
        return self.auth != "headers"

    def offers(self, tool: str) -> bool:
        """Whether the file lets this tool of the server be offered at all."""
        return (self.include is None or tool in self.include) and tool not in self.exclude


def parse_servers(document: Any, environ: Mapping[str, str] | None = None) -> list[ServerConfig]:
    """The servers of the file's document; ValueError with one problem a line, each naming
    where it is (`servers.shop.url: …`) and never a header's value."""
    environ = os.environ if environ is None else environ
    try:
        parsed = McpFile.model_validate(document)
    except ValidationError as exc:
        raise ValueError("\n".join(_describe(error) for error in exc.errors())) from None
    problems: list[str] = []
    servers: list[ServerConfig] = []
    for name, entry in parsed.servers.items():
        if not SERVER_NAME.match(name):
            problems.append(
                f"servers.{name[:40]!r}: a server's name is 1 to 32 letters, digits or '-'"
            )
            continue
        headers: dict[str, SecretStr] = {}
        for header, template in entry.headers.items():
            missing = [v for v in _ENV_REFERENCE.findall(template) if v not in environ]
            if missing:
                names = ", ".join(missing)
                problems.append(
                    f"servers.{name}.headers.{header}: {names} not set in the environment"
                )
                continue
            headers[header] = SecretStr(_ENV_REFERENCE.sub(lambda m: environ[m.group(1)], template))
        secret: SecretStr | None = None
        if entry.client_secret_env is not None:
            if entry.client_secret_env not in environ:
                problems.append(
                    f"servers.{name}.client_secret_env: {entry.client_secret_env} not set in "
                    "the environment"
                )
                continue
            secret = SecretStr(environ[entry.client_secret_env])
        servers.append(
            ServerConfig(
                name=name,
                url=entry.url,
                command=tuple(entry.command or ()),
                headers=headers,
                include=frozenset(entry.include) if entry.include is not None else None,
                exclude=frozenset(entry.exclude),
                approve=dict(entry.approve),
                approvers={
                    tool: who if isinstance(who, str) else f"usergroup:{who.usergroup}"
                    for tool, who in entry.approvers.items()
                },
                approvals_channel=entry.approvals_channel,
                auth=entry.auth,
                client_id=entry.client_id,
                client_secret=secret,
                scopes=tuple(entry.scopes) if entry.scopes is not None else None,
            )
        )
    if problems:
        raise ValueError("\n".join(problems))
    return servers


def _describe(error: Any) -> str:
    where = ".".join(str(p) for p in error["loc"]) or "(file)"
    message = str(error["msg"]).removeprefix("Value error, ")
    if error["type"] == "extra_forbidden":
        message = "unknown field"
    elif error["type"] == "missing":
        message = "required field is missing"
    return f"{where}: {message}"
