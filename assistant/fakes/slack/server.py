"""`FakeSlack`: a local Slack Web API and Socket Mode endpoint for tests and benchmarks.

Requests arrive exactly as slack-sdk sends them: POST with a form or JSON body, or (async
client, read methods) GET with a query string, to `/api/<method>`, the token in
`Authorization: Bearer` (or a `token` param). Answers use Slack's shapes. Every call is
recorded; faults (`ok: false`, 429 with Retry-After, HTTP 5xx) can be scripted per method,
and a method's call or a file's download can be held until the test releases it.

This module is the server: routing and the call log. Each API family is a module of its own
with its method table, which the router merges: `slack_auth` (auth.test, token checks),
`slack_chat` (chat.*), `slack_history` (conversations.replies/history, seeding messages),
`slack_conversations` (conversations.info/members), `slack_reactions`, `slack_users`,
`slack_views` (views.*, usergroups.users.list, chat.postEphemeral), `slack_oauth` (many
workspaces, `oauth.v2.access`, every call's token checked against the workspace it is about),
`slack_files` (file downloads), `slack_agents` (agent sessions, the stop button),
`slack_search` (`assistant.search.context`, action tokens), `slack_socket` (Socket Mode);
`slack_faults` scripts faults and `slack_holds` holds requests.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from assistant.fakes import ids
from assistant.fakes._server import DEFAULT_TIMEOUT, drop_connection, in_thread
from assistant.fakes.slack.agents import AgentSessions
from assistant.fakes.slack.assistant import AssistantThreads
from assistant.fakes.slack.auth import AuthMethods
from assistant.fakes.slack.chat import ChatMethods
from assistant.fakes.slack.conversations import Conversations
from assistant.fakes.slack.faults import DROPPED, Fault, FaultScripting
from assistant.fakes.slack.files import FileServing
from assistant.fakes.slack.history import HistoryMethods
from assistant.fakes.slack.holds import RequestHolds
from assistant.fakes.slack.oauth import OAuthMethods, basic_credentials
from assistant.fakes.slack.params import Handler, bearer
from assistant.fakes.slack.reactions import ReactionMethods
from assistant.fakes.slack.search import RealTimeSearch
from assistant.fakes.slack.socket import SocketModeServer
from assistant.fakes.slack.store import SlackError, SlackStore
from assistant.fakes.slack.stream import RateLimited, Streams
from assistant.fakes.slack.users import UserMethods
from assistant.fakes.slack.views import ViewMethods

JSON_TYPE = "application/json"
NO_TOKEN = {"oauth.v2.access"}  # the app's client id and secret instead


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


class FakeSlack(
    AuthMethods,
    OAuthMethods,
    ChatMethods,
    HistoryMethods,
    ReactionMethods,
    UserMethods,
    ViewMethods,
    FileServing,
    FaultScripting,
    RequestHolds,
    SocketModeServer,
):
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
        agent: bool = False,
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
        # Real-time Search: action tokens handed out to tests, the search as each person sees.
        self.search = RealTimeSearch(self._cond, self.store, self.conversations, team_id)
        self.streams = Streams(self.store, bot_user_id, bot_id, app_id)
        # Agent sessions: only for an app declared as an agent (`agent`), else not_authorized.
        self.agents = AgentSessions(self._cond, self.store, bot_id, agent)
        # The panel's methods; for an agent, bridged to its sessions (2026-08-20 changelog).
        self.assistant_threads = AssistantThreads(self._cond, self.store, self.agents)
        self.streams.session_status = self.agents.stream_stopped
        self._calls: list[Call] = []
        self._init_files()
        self._init_views()
        self._init_faults()
        self._init_holds()
        self._init_socket_mode()
        self._init_oauth()
        self.calling_token: str | None = None
        self._methods: dict[str, Handler] = {
            **self._auth_methods(),
            **self._oauth_methods(),
            **self._chat_methods(),
            **self._history_methods(),
            **self._reaction_methods(),
            **self._user_methods(),
            **self._view_methods(),
            **self._socket_mode_methods(),
            **self.conversations.methods(),
            **self.assistant_threads.methods(),
            **self.search.methods(),
            **self.streams.methods(),
            **self.agents.methods(),
        }

    @property
    def api_url(self) -> str:
        """The `base_url` for slack-sdk clients (trailing slash required by slack-sdk)."""
        return f"{self.url}/api/"

    def _build_app(self) -> web.Application:
        app = web.Application()
        app.router.add_route("*", "/api/{method}", self._handle_api)
        app.router.add_routes(self._file_routes())
        app.router.add_routes(self._socket_mode_routes())
        return app

    async def _before_shutdown(self) -> None:
        with self._cond:
            held = list(self._held)
        for hold in held:  # never leave a handler waiting on a test that has finished
            hold.release()
        await self._close_sockets()

    # -- the call log --------------------------------------------------------------------------

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

        # Typed here: ReactionMethods declares `_wait` loosely, and comes first in the bases.
        calls: list[Call] = self._wait(
            lambda: found if len(found := matching()) >= count else None,
            timeout,
            lambda: f"{len(matching())}/{count} {method} calls; got {self._summary()}",
        )
        return calls

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

    # -- Web API -------------------------------------------------------------------------------

    async def _handle_api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        await self._wait_if_held(method)
        response = await self._carry_out(method, request)
        await self._wait_if_held(f"answer:{method}")  # done, its answer on its way back
        return response

    async def _carry_out(self, method: str, request: web.Request) -> web.Response:
        params = dict(request.query)
        try:
            params.update(await _read_body(request))
        except ValueError:
            return self._answer(
                method, params, request, None, 200, {"ok": False, "error": "invalid_json"}
            )
        token = bearer(request.headers.get("Authorization")) or params.get("token")
        params.pop("token", None)
        with self._cond:
            fault = self._take_fault(method)
            if fault is not None and not fault.carried_out:
                return self._faulty(method, params, request, token, fault.body, fault)
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
                elif method in NO_TOKEN:
                    params.update(basic_credentials(request.headers.get("Authorization")))
                    body = handler(params)
                else:
                    self._check_token(method, token)
                    self._check_workspace(method, token or "", params)
                    self.calling_token = token  # under the lock: the call's, for auth.test
                    body = handler(params)
            except SlackError as exc:
                body = exc.body()
            if fault is not None:  # carried out; the caller gets the fault, not the answer
                return self._faulty(method, params, request, token, body, fault)
            return self._answer(method, params, request, token, 200, body)

    def _faulty(
        self,
        method: str,
        params: dict[str, Any],
        request: web.Request,
        token: str | None,
        recorded: dict[str, Any],
        fault: Fault,
    ) -> web.Response:
        """Answer with `fault` (recorded with `recorded`: its body, or the lost answer)."""
        if fault.status == DROPPED:
            self._answer(method, params, request, token, DROPPED, recorded)
            return drop_connection(request)
        call = Call(method, params, dict(request.headers), token, fault.status, recorded)
        with self._cond:
            self._calls.append(call)
            self._cond.notify_all()
        return web.json_response(fault.body, status=fault.status, headers=fault.headers)

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
