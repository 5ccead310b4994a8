"""`FakeSlack`: a local Slack Web API and Socket Mode endpoint for tests and benchmarks.

Requests arrive exactly as slack-sdk sends them: POST with a form or JSON body, or (async
client, read methods) GET with a query string, to `/api/<method>`, the token in
`Authorization: Bearer` (or a `token` param). Answers use Slack's shapes. Every call is
recorded; faults (`ok: false`, 429 with Retry-After, HTTP 5xx) can be scripted per method.
"""

from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from fakes import ids
from fakes._server import DEFAULT_TIMEOUT, drop_connection, in_thread
from fakes.slack_conversations import Conversations
from fakes.slack_socket import SocketModeServer
from fakes.slack_store import SlackError, SlackStore
from fakes.slack_stream import RateLimited, Streams

JSON_TYPE = "application/json"


@dataclass(frozen=True)
class Call:
    """One Web API request: params merged from query string and body (token removed)."""

    method: str
    params: dict[str, Any]
    headers: dict[str, str]
    token: str | None = None
    status: int = 200
    response: dict[str, Any] = field(default_factory=dict)
    at: float = field(default_factory=time.monotonic)  # when it was answered

    @property
    def ok(self) -> bool:
        return self.status == 200 and bool(self.response.get("ok"))


SIGN_IN_PAGE = "<!DOCTYPE html><html><head><title>Slack</title></head><body>Sign in</body></html>"


@dataclass(frozen=True)
class _File:
    content: bytes
    mimetype: str
    access: bool


DROPPED = 0  # a fault's status for "the connection was closed, nothing was answered"


@dataclass
class _Fault:
    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


class FakeSlack(SocketModeServer):
    """Fake Slack. Use as `with FakeSlack() as slack:`; point clients at `slack.api_url`."""

    def __init__(
        self,
        *,
        bot_token: str | None = None,
        app_token: str | None = None,
        team_id: str = ids.TEAM_ID,
        bot_user_id: str = ids.BOT_USER_ID,
        bot_id: str = ids.BOT_ID,
        app_id: str = ids.APP_ID,
        max_text_length: int = 40_000,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        super().__init__(host, port)
        # None accepts any token of the right kind (xoxb-/xoxp- for the Web API, xapp- for
        # apps.connections.open); a value must match exactly.
        self.bot_token = bot_token
        self.app_token = app_token
        self.team_id = team_id
        self.bot_user_id = bot_user_id
        self.bot_id = bot_id
        self.app_id = app_id
        self.max_text_length = max_text_length
        self.store = SlackStore(team_id=team_id, bot_user_id=bot_user_id)
        self.store.add_user(bot_user_id, ids.BOT_USER_NAME, is_bot=True)
        self.store.add_user(ids.USER_ID, "alice")
        # Declared conversations (conversations.info / .members): by default the channel
        # and the DM that the event builders use.
        self.conversations = Conversations(self._cond, team_id, bot_user_id)
        self.conversations.public(ids.CHANNEL_ID, [ids.USER_ID], name="general")
        self.conversations.im(ids.DM_CHANNEL_ID, ids.USER_ID)
        self._calls: list[Call] = []
        self._files: dict[str, _File] = {}
        self.downloads: list[str] = []  # file ids served, in order
        self._faults: dict[str, deque[_Fault]] = {}
        self.streams = Streams(self.store, bot_user_id, bot_id, app_id)
        self._init_socket_mode()
        self._methods: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
            "auth.test": self._auth_test,
            "chat.postMessage": self._chat_post_message,
            "chat.update": self._chat_update,
            "chat.delete": self._chat_delete,
            "chat.getPermalink": self._chat_get_permalink,
            "conversations.replies": self._conversations_replies,
            "conversations.history": self._conversations_history,
            "reactions.add": self._reactions_add,
            "reactions.remove": self._reactions_remove,
            "assistant.threads.setStatus": lambda params: {"ok": True},
            "users.info": self._users_info,
            "apps.connections.open": self._apps_connections_open,
            **self.conversations.methods(),
            **self.streams.methods(),
        }

    @property
    def api_url(self) -> str:
        """The `base_url` for slack-sdk clients (trailing slash required by slack-sdk)."""
        return f"{self.url}/api/"

    def _build_app(self) -> web.Application:
        app = web.Application()
        app.router.add_route("*", "/api/{method}", self._handle_api)
        app.router.add_get("/files-pri/{file_id}/{name}", self._handle_file)
        app.router.add_get("/socket-mode", self._handle_socket)
        return app

    async def _before_shutdown(self) -> None:
        await self._close_sockets()

    # -- seeding and inspection ----------------------------------------------------------------

    def add_message(
        self,
        channel: str,
        ts: str | None = None,
        user: str | None = ids.USER_ID,
        text: str = "",
        thread_ts: str | None = None,
        bot_id: str | None = None,
        files: list[dict[str, Any]] | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        """Seed a message (a thread parent, or a reply when `thread_ts` is given)."""
        message: dict[str, Any] = {"ts": ts or ids.next_ts(), "text": text, "team": self.team_id}
        if user is not None:
            message["user"] = user
        if thread_ts is not None:
            message["thread_ts"] = thread_ts
        if bot_id is not None:
            message.update(bot_id=bot_id, app_id=self.app_id)
        if files is not None:
            message.update(files=files, upload=False)
        message.update(extra)
        with self._cond:
            return self.store.add(channel, message)

    def add_file(
        self,
        name: str,
        mimetype: str,
        content: bytes,
        *,
        access: bool = True,
        filetype: str | None = None,
        **fields: Any,
    ) -> dict[str, Any]:
        """A file as a message's `files` list carries it. Its `url_private` serves `content`
        to the bot token; without `access`, like Slack for a file the app may not read, it
        answers 200 with an HTML sign-in page."""
        file_id = f"F{len(self._files) + 1:08d}"
        with self._cond:
            self._files[file_id] = _File(content, mimetype, access)
        url = f"{self.url}/files-pri/{file_id}/{name}"
        return {
            "id": file_id,
            "name": name,
            "title": name,
            "mimetype": mimetype,
            "filetype": filetype or name.rsplit(".", 1)[-1].lower(),
            "size": len(content),
            "url_private": url,
            "url_private_download": url + "?download=1",
            **fields,
        }

    async def _handle_file(self, request: web.Request) -> web.StreamResponse:
        file_id = request.match_info["file_id"]
        with self._cond:
            found = self._files.get(file_id)
            token = _bearer(request.headers.get("Authorization"))
            allowed = token is not None and (self.bot_token is None or token == self.bot_token)
            if found is not None and found.access and allowed:
                self.downloads.append(file_id)
                return web.Response(body=found.content, content_type=found.mimetype)
        return web.Response(text=SIGN_IN_PAGE, content_type="text/html")

    def add_user(self, user_id: str, name: str, **fields: Any) -> dict[str, Any]:
        """Seed a user for `users.info` (see `SlackStore.add_user` for the fields)."""
        with self._cond:
            return self.store.add_user(user_id, name, **fields)

    def thread(self, channel: str, thread_ts: str) -> list[dict[str, Any]]:
        """The stored thread, parent first, as `conversations.replies` would show it."""
        with self._cond:
            return self.store.thread(channel, thread_ts)

    def reactions(self, channel: str, ts: str) -> list[str]:
        """Reaction names currently on a message (added by the bot and not removed)."""
        with self._cond:
            return list(self.store.reactions.get((channel, ts), []))

    @property
    def calls(self) -> list[Call]:
        with self._cond:
            return list(self._calls)

    def calls_to(self, method: str) -> list[Call]:
        with self._cond:
            return [c for c in self._calls if c.method == method]

    def wait_for_call(
        self,
        method: str,
        count: int = 1,
        timeout: float = DEFAULT_TIMEOUT,
        where: Callable[[Call], bool] | None = None,
    ) -> list[Call]:
        """Block until `count` calls to `method` (matching `where`) were answered."""

        def matching() -> list[Call]:
            return [c for c in self._calls if c.method == method and (where is None or where(c))]

        return self._wait(
            lambda: found if len(found := matching()) >= count else None,
            timeout,
            lambda: f"{len(matching())}/{count} {method} calls; got {self._summary()}",
        )

    async def wait_for_call_async(
        self,
        method: str,
        count: int = 1,
        timeout: float = DEFAULT_TIMEOUT,
        where: Callable[[Call], bool] | None = None,
    ) -> list[Call]:
        return await in_thread(self.wait_for_call, method, count, timeout, where)

    def _summary(self) -> str:
        return ", ".join(f"{c.method}->{c.response.get('error', c.status)}" for c in self._calls)

    # -- scripted faults -----------------------------------------------------------------------

    def fail(self, method: str, error: str, *, times: int = 1, **extra: Any) -> None:
        """The next `times` calls to `method` answer `{"ok": false, "error": error, **extra}`.

        `method="*"` applies to whichever method is called next.
        """
        self._add_fault(method, times, _Fault(200, {"ok": False, "error": error, **extra}))

    def rate_limit(self, method: str, *, retry_after: int = 1, times: int = 1) -> None:
        """The next `times` calls get HTTP 429 with `Retry-After` (whole seconds, like Slack)."""
        fault = _Fault(
            429, {"ok": False, "error": "ratelimited"}, {"Retry-After": str(retry_after)}
        )
        self._add_fault(method, times, fault)

    def server_error(self, method: str, *, status: int = 500, times: int = 1) -> None:
        """The next `times` calls get an HTTP 5xx."""
        self._add_fault(method, times, _Fault(status, {"ok": False, "error": "fatal_error"}))

    def disconnect(self, method: str, *, times: int = 1) -> None:
        """The next `times` calls get no answer: the connection is closed on them (recorded
        as calls with status 0)."""
        self._add_fault(method, times, _Fault(DROPPED, {}))

    def _add_fault(self, method: str, times: int, fault: _Fault) -> None:
        with self._cond:
            self._faults.setdefault(method, deque()).extend([fault] * times)

    def _take_fault(self, method: str) -> _Fault | None:
        for key in (method, "*"):
            queue = self._faults.get(key)
            if queue:
                return queue.popleft()
        return None

    # -- Web API -------------------------------------------------------------------------------

    async def _handle_api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        params = dict(request.query)
        try:
            params.update(await _read_body(request))
        except ValueError:
            return self._answer(
                method, params, request, None, 200, {"ok": False, "error": "invalid_json"}
            )
        token = _bearer(request.headers.get("Authorization")) or params.get("token")
        params.pop("token", None)
        with self._cond:
            fault = self._take_fault(method)
            if fault is not None and fault.status == DROPPED:
                self._answer(method, params, request, token, DROPPED, {})
                return drop_connection(request)
            if fault is not None:
                return self._answer(
                    method, params, request, token, fault.status, fault.body, fault.headers
                )
            handler = self._methods.get(method)
            try:
                self.streams.check_rate(method)
            except RateLimited as exc:
                limited = {"ok": False, "error": "ratelimited"}
                headers = {"Retry-After": str(exc.retry_after)}
                return self._answer(method, params, request, token, 429, limited, headers)
            try:
                if handler is None:
                    body = {"ok": False, "error": "unknown_method", "req_method": method}
                else:
                    self._check_token(method, token)
                    body = handler(params)
            except SlackError as exc:
                body = {"ok": False, "error": exc.code}
            return self._answer(method, params, request, token, 200, body)

    def _answer(
        self,
        method: str,
        params: dict[str, Any],
        request: web.Request,
        token: str | None,
        status: int,
        body: dict[str, Any],
        headers: dict[str, str] | None = None,
    ) -> web.Response:
        call = Call(method, params, dict(request.headers), token, status, body)
        with self._cond:
            self._calls.append(call)
            self._cond.notify_all()
        return web.json_response(body, status=status, headers=headers)

    def _check_token(self, method: str, token: str | None) -> None:
        if not token:
            raise SlackError("not_authed")
        app_level = method == "apps.connections.open"
        if token.startswith("xapp-") != app_level:
            raise SlackError("not_allowed_token_type")
        expected = self.app_token if app_level else self.bot_token
        if expected is not None and token != expected:
            raise SlackError("invalid_auth")
        if expected is None and not token.startswith(("xapp-", "xoxb-", "xoxp-")):
            raise SlackError("invalid_auth")

    def _auth_test(self, params: dict[str, Any]) -> dict[str, Any]:
        return {
            "ok": True,
            "url": f"https://{ids.TEAM_DOMAIN}.slack.com/",
            "team": ids.TEAM_NAME,
            "user": ids.BOT_USER_NAME,
            "team_id": self.team_id,
            "user_id": self.bot_user_id,
            "bot_id": self.bot_id,
            "is_enterprise_install": False,
        }

    def _chat_post_message(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = _required(params, "channel", "channel_not_found")
        text = params.get("text") or ""
        blocks = _json_field(params.get("blocks"))
        if not text and not blocks and not params.get("attachments"):
            raise SlackError("no_text")
        if len(text) > self.max_text_length:
            raise SlackError("msg_too_long")
        message: dict[str, Any] = {
            "user": self.bot_user_id,
            "ts": ids.next_ts(),
            "bot_id": self.bot_id,
            "app_id": self.app_id,
            "text": text,
            "team": self.team_id,
            "bot_profile": {
                "id": self.bot_id,
                "app_id": self.app_id,
                "name": ids.BOT_USER_NAME,
                "deleted": False,
                "team_id": self.team_id,
            },
        }
        if params.get("thread_ts"):
            message["thread_ts"] = params["thread_ts"]
        if blocks:
            message["blocks"] = blocks
        if params.get("metadata"):
            message["metadata"] = _json_field(params["metadata"])
        stored = self.store.add(channel, message)
        return {"ok": True, "channel": channel, "ts": stored["ts"], "message": stored}

    def _chat_update(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = _required(params, "channel", "channel_not_found")
        message = self.store.get(channel, _required(params, "ts", "message_not_found"))
        if message is None:
            raise SlackError("message_not_found")
        text = params.get("text", message.get("text", ""))
        if len(text) > self.max_text_length:
            raise SlackError("msg_too_long")
        message["text"] = text
        if params.get("blocks"):
            message["blocks"] = _json_field(params["blocks"])
        message["edited"] = {"user": self.bot_user_id, "ts": ids.next_ts()}
        rendered = self.store.render(channel, message)
        return {
            "ok": True,
            "channel": channel,
            "ts": message["ts"],
            "text": text,
            "message": rendered,
        }

    def _chat_delete(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = _required(params, "channel", "channel_not_found")
        ts = _required(params, "ts", "message_not_found")
        if self.store.messages.get(channel, {}).pop(ts, None) is None:
            raise SlackError("message_not_found")
        return {"ok": True, "channel": channel, "ts": ts}

    def _chat_get_permalink(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = _required(params, "channel", "channel_not_found")
        ts = _required(params, "message_ts", "message_not_found")
        link = f"https://{ids.TEAM_DOMAIN}.slack.com/archives/{channel}/p{ts.replace('.', '')}"
        message = self.store.get(channel, ts)
        if message is not None and message.get("thread_ts"):
            link += f"?thread_ts={message['thread_ts']}&cid={channel}"
        return {"ok": True, "channel": channel, "permalink": link}

    def _conversations_replies(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = _required(params, "channel", "channel_not_found")
        ts = _required(params, "ts", "thread_not_found")
        try:
            limit = min(max(int(params.get("limit") or 1000), 1), 1000)
        except ValueError as exc:
            raise SlackError("invalid_limit") from exc
        page = self.store.replies_page(
            channel,
            ts,
            limit=limit,
            cursor=params.get("cursor") or None,
            oldest=params.get("oldest") or None,
            latest=params.get("latest") or None,
            inclusive=_flag(params.get("inclusive")),
        )
        if not _flag(params.get("include_all_metadata")):
            # Like Slack: messages carry their metadata only when it is asked for.
            for message in page["messages"]:
                message.pop("metadata", None)
        return page

    def _conversations_history(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = _required(params, "channel", "channel_not_found")
        try:
            limit = min(max(int(params.get("limit") or 100), 1), 999)
        except ValueError as exc:
            raise SlackError("invalid_limit") from exc
        return self.store.history_page(
            channel,
            limit=limit,
            oldest=params.get("oldest") or None,
            latest=params.get("latest") or None,
            inclusive=_flag(params.get("inclusive")),
        )

    def _reactions_add(self, params: dict[str, Any]) -> dict[str, Any]:
        channel, ts, name = _reaction_args(params)
        self.store.add_reaction(channel, ts, name)
        return {"ok": True}

    def _reactions_remove(self, params: dict[str, Any]) -> dict[str, Any]:
        channel, ts, name = _reaction_args(params)
        self.store.remove_reaction(channel, ts, name)
        return {"ok": True}

    def _users_info(self, params: dict[str, Any]) -> dict[str, Any]:
        user = self.store.users.get(params.get("user", ""))
        if user is None:
            raise SlackError("user_not_found")
        return {"ok": True, "user": user}


async def _read_body(request: web.Request) -> dict[str, Any]:
    if not request.can_read_body:
        return {}
    if request.content_type == JSON_TYPE:
        body = await request.json()
        if not isinstance(body, dict):
            raise ValueError("JSON body is not an object")
        return body
    form = await request.post()
    # File uploads are recorded by name only.
    return {k: v if isinstance(v, str) else getattr(v, "filename", "") for k, v in form.items()}


def _bearer(header: str | None) -> str | None:
    if header and header.startswith("Bearer "):
        return header.removeprefix("Bearer ").strip() or None
    return None


def _required(params: dict[str, Any], name: str, error: str) -> str:
    value = params.get(name)
    if not value:
        raise SlackError(error)
    return str(value)


def _json_field(value: Any) -> Any:
    # Form-encoded requests carry blocks/metadata as JSON strings; JSON bodies as objects.
    if isinstance(value, str) and value.strip().startswith(("[", "{")):
        return json.loads(value)
    return value


def _flag(value: Any) -> bool:
    return str(value or "").lower() in ("1", "true")


def _reaction_args(params: dict[str, Any]) -> tuple[str, str, str]:
    channel = _required(params, "channel", "channel_not_found")
    ts = _required(params, "timestamp", "no_item_specified")
    name = _required(params, "name", "invalid_name")
    return channel, ts, name
