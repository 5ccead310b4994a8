"""Socket Mode half of `FakeSlack`: `apps.connections.open` hands out single-use
`ws://` URLs; the websocket greets with Slack's `hello`, carries envelopes to the client and
records its acks (`{"envelope_id": ...}`).
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from aiohttp import WSMsgType, web

from assistant.fakes._server import DEFAULT_TIMEOUT, BackgroundServer, in_thread
from assistant.fakes.requests import event_callback
from assistant.fakes.slack.params import Handler


class SocketModeServer(BackgroundServer):
    """Base of `FakeSlack`, which sets the identity attributes declared here."""

    app_id: str
    team_id: str
    bot_user_id: str

    def _init_socket_mode(self) -> None:
        self._tickets: set[str] = set()
        self._sockets: list[web.WebSocketResponse] = []
        self.socket_connections = 0  # how many Socket Mode connections were ever opened
        self.socket_frames: list[dict[str, Any]] = []  # everything clients sent over sockets
        self._acks: dict[str, dict[str, Any]] = {}

    def _socket_mode_methods(self) -> dict[str, Handler]:
        return {"apps.connections.open": self._apps_connections_open}

    def _socket_mode_routes(self) -> list[web.RouteDef]:
        return [web.get("/socket-mode", self._handle_socket)]

    async def _close_sockets(self) -> None:
        for ws in list(self._sockets):
            await ws.close(code=1001, message=b"server shutting down")

    def _apps_connections_open(self, params: dict[str, Any]) -> dict[str, Any]:
        ticket = str(uuid.uuid4())
        self._tickets.add(ticket)
        url = f"ws://{self.host}:{self.port}/socket-mode?ticket={ticket}&app_id={self.app_id}"
        return {"ok": True, "url": url}

    async def _handle_socket(self, request: web.Request) -> web.StreamResponse:
        with self._cond:
            ticket = request.query.get("ticket", "")
            if ticket not in self._tickets:
                # Slack's URLs are single-use tickets from apps.connections.open.
                return web.Response(status=401, text="invalid ticket")
            self._tickets.discard(ticket)
        ws = web.WebSocketResponse(autoping=True)  # answers the client's "sdk-ping-pong" pings
        await ws.prepare(request)
        with self._cond:
            self._sockets.append(ws)
            self.socket_connections += 1
            live = len(self._sockets)
        await ws.send_json(
            {
                "type": "hello",
                "num_connections": live,
                "debug_info": {
                    "host": "applink-fake",
                    "build_number": 10,
                    "approximate_connection_time": 18060,
                },
                "connection_info": {"app_id": self.app_id},
            }
        )
        self._notify()
        try:
            async for frame in ws:
                if frame.type != WSMsgType.TEXT:
                    continue
                data = json.loads(frame.data)
                with self._cond:
                    self.socket_frames.append(data)
                    if isinstance(data, dict) and "envelope_id" in data:
                        self._acks[data["envelope_id"]] = data
                    self._cond.notify_all()
        finally:
            with self._cond:
                self._sockets.remove(ws)
                self._cond.notify_all()
        return ws

    def send_envelope(
        self,
        payload: dict[str, Any],
        type: str = "events_api",
        *,
        retry_attempt: int = 0,
        retry_reason: str = "",
        accepts_response_payload: bool = False,
        envelope_id: str | None = None,
    ) -> str:
        """Push an envelope to the newest connected client; returns its envelope_id."""
        envelope_id = envelope_id or str(uuid.uuid4())
        envelope = {
            "envelope_id": envelope_id,
            "type": type,
            "payload": payload,
            "accepts_response_payload": accepts_response_payload,
            "retry_attempt": retry_attempt,
            "retry_reason": retry_reason,
        }
        self._send_frame(envelope, everyone=False)
        return envelope_id

    def send_event(self, event: dict[str, Any], **envelope: Any) -> str:
        """Wrap an inner event (see `assistant.fakes.events.builders`) in an `event_callback` and
        push it."""
        payload = event_callback(
            event, team_id=self.team_id, api_app_id=self.app_id, bot_user_id=self.bot_user_id
        )
        return self.send_envelope(payload, **envelope)

    def disconnect_socket(self, reason: str = "refresh_requested") -> None:
        """Ask connected clients to reconnect, as Slack does every few hours."""
        self._send_frame(
            {"type": "disconnect", "reason": reason, "debug_info": {"host": "applink-fake"}},
            everyone=True,
        )

    def _send_frame(self, frame: dict[str, Any], *, everyone: bool) -> None:
        with self._cond:
            targets = [ws for ws in self._sockets if not ws.closed]
        if not targets:
            raise RuntimeError("FakeSlack: no Socket Mode client is connected")
        text = json.dumps(frame)

        async def send() -> None:
            for ws in targets if everyone else targets[-1:]:
                await ws.send_str(text)

        self._run_on_loop(send())

    def wait_connected(self, timeout: float = DEFAULT_TIMEOUT) -> int:
        """Block until a Socket Mode client is connected; returns the open connection count."""
        return self._wait(
            lambda: len(self._sockets), timeout, lambda: "no Socket Mode client connected"
        )

    def wait_for_ack(self, envelope_id: str, timeout: float = DEFAULT_TIMEOUT) -> dict[str, Any]:
        """Block until the client acks `envelope_id`; returns the ack frame."""
        return self._wait(
            lambda: self._acks.get(envelope_id),
            timeout,
            lambda: f"no ack for {envelope_id}; acked: {list(self._acks)}",
        )

    async def wait_connected_async(self, timeout: float = DEFAULT_TIMEOUT) -> int:
        return await in_thread(self.wait_connected, timeout)

    async def wait_for_ack_async(
        self, envelope_id: str, timeout: float = DEFAULT_TIMEOUT
    ) -> dict[str, Any]:
        return await in_thread(self.wait_for_ack, envelope_id, timeout)
