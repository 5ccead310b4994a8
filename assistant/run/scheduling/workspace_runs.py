"""The scheduler's run, tidy and stop functions for many workspaces: each thread's by the parts
built with its own workspace's client (assistant/slack/workspaces.py), so a thread of one
workspace is never answered or read with another's token.

A thread of a workspace the app is no longer installed in (uninstalled, its token revoked)
gets no Slack call: its request ends with one entry saying why, and one line in the console
log. A workspace still installed whose token has expired without being refreshed (Slack down,
or the refresh token refused) keeps its requests owed: they are tried again later, and
answered once a token works (a refresh, or the app installed there again)."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from assistant.run.core.deferral import RunDeferred
from assistant.run.core.recorder import Recorder
from assistant.run.core.requests import AnswerRequest
from assistant.run.loop.agent import Agent
from assistant.run.stopping.stop import StopRecorder
from assistant.run.streaming.sweeper import StreamSweeper
from assistant.slack.workspaces import PerWorkspace, TokenUnavailable
from context.entry import FAILURE_PREFIX
from context.storage import StopRequest, ThreadKey

log = logging.getLogger(__name__)

# How long a thread waits for its workspace's token before it is tried again.
TOKEN_RETRY_SECONDS = 60.0

NOT_INSTALLED = (
    f"{FAILURE_PREFIX}the app is not installed in this workspace (any more), so no one "
    "was answered and nothing was read or posted."
)


@dataclass(frozen=True)
class WorkspaceRuns:
    recorder: Recorder
    agents: PerWorkspace[Agent]
    sweepers: PerWorkspace[StreamSweeper]
    stoppers: PerWorkspace[StopRecorder]

    async def run(self, key: ThreadKey, requests: list[AnswerRequest]) -> None:
        try:
            agent = await self.agents.of(key.team)
        except TokenUnavailable as exc:
            raise RunDeferred(str(exc), TOKEN_RETRY_SECONDS) from exc
        if agent is None:
            await self._not_installed(key, None)
            return
        await agent.run(key, requests)

    async def tidy(self, key: ThreadKey) -> None:
        try:
            sweeper = await self.sweepers.of(key.team)
        except TokenUnavailable:
            return  # its streams stay as they are until a run of the thread finds a token
        if sweeper is not None:  # else its streams stay as they are: nothing may be called
            await sweeper(key)

    async def stopped(
        self, key: ThreadKey, stop: StopRequest, shown: list[tuple[str, str]]
    ) -> None:
        try:
            stopper = await self.stoppers.of(key.team)
        except TokenUnavailable as exc:
            raise RunDeferred(str(exc), TOKEN_RETRY_SECONDS) from exc
        if stopper is None:
            await self._not_installed(key, stop.through)
            return
        await stopper(key, stop, shown)

    async def _not_installed(self, key: ThreadKey, through: int | None) -> None:
        if through is None:
            through = len(await self.recorder.entries(key)) - 1
        log.warning("thread %s not answered: the app is not installed in its workspace", key)
        await self.recorder.record(key, NOT_INSTALLED, answered_through=through)
