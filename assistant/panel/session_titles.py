"""A person renamed a thread's agent session in Slack (`agent_session_title_changed`;
docs/architecture.md#agent-sessions): the title is kept in the store as theirs, with a system
entry saying so in the same write, and the app never renames the session over it (the panel
asks the store before its one rename: `assistant.panel.events`). A session the app never made
(a thread the store does not know) changes nothing: one line in the process's log.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from assistant.intake.event_shapes import SessionTitleFields, checked
from assistant.run.core.recorder import Recorder
from context.entry import now_timestamp
from context.storage import EntryMeta, ThreadKey

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SessionTitles:
    recorder: Recorder  # the events' (its writes go first: Slack waits for the ack)

    async def changed(self, body: dict[str, Any], event: dict[str, Any]) -> None:
        found = checked(body, event, SessionTitleFields)
        if found is None:
            return
        key = ThreadKey(found.team, event["channel"], event["thread_ts"])
        if not await self.recorder.read(self.recorder.store.has_thread, key):
            log.info("session title changed in %s, a thread not in the store: ignored", key)
            return
        title, user = event["title"], event["user"]
        before = event.get("previous_title")
        was = f' (it was "{before}")' if isinstance(before, str) and before else ""
        text = f'<@{user}> renamed the conversation "{title}"{was}; the app keeps that title.'
        await self.recorder.record_by(
            self.recorder.store.record_session_title,
            key,
            title,
            user,
            text,
            now_timestamp(),
            EntryMeta(event_id=found.event_id),
        )
