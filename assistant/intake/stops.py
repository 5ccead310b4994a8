"""The stop button of a thread's agent session (Slack's `agent_session_stopped` event;
docs/architecture.md#the-stop-button): the stop goes into the store, which every process
running threads reads, and a run of the thread in this process is told at once.

Who may stop: anyone Slack shows the button to (Slack has already stopped the answer's
streams when the event comes); the stop's entry names them, and says so when they are not
the person who asked. A stop when no run is owed (it finished, or another stop came first,
or Slack sent the event again) changes nothing: one line in the process's log, no entry.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from assistant.run.core.recorder import Recorder
from assistant.run.scheduling.scheduler import RunScheduler
from context.storage import ThreadKey

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class StopButton:
    recorder: Recorder  # the events' (its writes go first: Slack waits for the ack)
    scheduler: RunScheduler | None  # None: the ingress role; a worker's run sees the store's stop

    async def pressed(self, body: dict[str, Any], event: dict[str, Any]) -> None:
        """Record the stop the event asks for, if it is well formed; acknowledged anyway."""
        team = body.get("team_id")
        channel, thread_ts, user = event.get("channel"), event.get("thread_ts"), event.get("user")
        streams = event.get("streaming_message_ts", [])
        if not (
            all(isinstance(value, str) and value for value in (team, channel, thread_ts, user))
            and isinstance(streams, list)
            and all(isinstance(ts, str) for ts in streams)
        ):
            log.warning(
                "event %s (agent_session_stopped) not recorded: malformed", body.get("event_id")
            )
            return
        assert isinstance(team, str) and isinstance(channel, str) and isinstance(thread_ts, str)
        assert isinstance(user, str)
        key = ThreadKey(team, channel, thread_ts)
        event_ts = event.get("event_ts")
        at = event_ts if isinstance(event_ts, str) else ""
        stop = await self.recorder.call(
            self.recorder.store.request_stop, key, user, at, tuple(streams)
        )
        if stop is None:
            log.info("stop pressed in thread %s by %s: no run to stop", key, user)
            return
        log.info("stop pressed in thread %s by %s", key, user)
        if self.scheduler is not None:
            self.scheduler.stop_now(key)
