"""A click on the buttons of an MCP server's question, and its form sent
(docs/slack-features.md#questions-from-tools), in any process: only the person asked may answer;
a form is checked against what the server asked (an invalid one shows its fields' errors); the
answer goes to the store, where the waiting call reads it (assistant/run/tools/asking.py)."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from assistant.i18n.words import Words
from assistant.run.channels.languages import Languages
from assistant.run.tools.questions import (
    DECLINE,
    DONE,
    FILL_IN,
    Question,
    checked,
    form_view,
    submitted_values,
)
from assistant.slack.connection import SLACK_FAILURES, slack_reason
from context.storage import Elicitation, Store, ThreadKey
from context.storage.async_store import async_store

log = logging.getLogger(__name__)

MAX_ID = 2**62  # a button's value larger than any id is not one


@dataclass(frozen=True)
class QuestionButtons:
    store: Store
    languages: Languages

    async def clicked(
        self, body: dict[str, Any], action: dict[str, Any], client: AsyncWebClient
    ) -> None:
        """A `block_actions` payload of a question's button: Fill in opens the form, Decline
        and (URL mode) Done answer at once; the link button itself answers nothing."""
        action_id = action.get("action_id")
        if action_id not in (FILL_IN, DECLINE, DONE):
            return
        asked = await self._waiting(body, action.get("value"), client)
        if asked is None:
            return
        user = str(_object(body.get("user")).get("id"))
        if action_id == FILL_IN:
            words = (await self.languages.of(client, asked.team, user)).words
            view = form_view(Question.from_json(asked.question_json), asked.id, words)
            try:
                await client.views_open(trigger_id=str(body.get("trigger_id")), view=view)
            except SLACK_FAILURES as exc:
                log.info("could not open the form of question %d: %s", asked.id, slack_reason(exc))
            return
        answer = "decline" if action_id == DECLINE else "accept"
        await self._answer(asked, answer, None, user)

    async def submitted(
        self, body: dict[str, Any], view: dict[str, Any], client: AsyncWebClient
    ) -> dict[str, str] | None:
        """The form sent: the errors to show by block id, or None (answered, or refused: the
        form closes)."""
        asked = await self._waiting(body, view.get("private_metadata"), client)
        if asked is None:
            return None
        user = str(_object(body.get("user")).get("id"))
        question = Question.from_json(asked.question_json)
        words = (await self.languages.of(client, asked.team, user)).words
        state = _object(_object(view.get("state")).get("values"))
        content, errors = checked(question, submitted_values(question, state), words)
        if errors:
            places = {item.name: f"f{at}" for at, item in enumerate(question.fields)}
            return {places[name]: error for name, error in errors.items()}
        await self._answer(asked, "accept", json.dumps(content, ensure_ascii=False), user)
        return None

    async def _waiting(
        self, body: dict[str, Any], value: object, client: AsyncWebClient
    ) -> Elicitation | None:
        """The question a click or form names, if it still waits and the clicker is the person
        asked; the clicker is told otherwise."""
        person = _object(body.get("user"))
        team = _object(body.get("team")).get("id") or person.get("team_id")
        user = person.get("id")
        if not (isinstance(value, str) and value.isdigit() and int(value) < MAX_ID):
            log.warning("a question's button or form that names no question was ignored")
            return None
        if not isinstance(team, str) or not isinstance(user, str):
            return None
        store = self.store
        asked = await async_store(store).read(store.elicitation, team, int(value))
        if asked is None:
            log.warning("a click on question %s, unknown to workspace %s, was ignored", value, team)
            return None
        words = (await self.languages.of(client, team, user)).words
        key = ThreadKey(asked.team, asked.channel, asked.thread_ts)
        stopped = await async_store(store).read(store.stop_requested, key)
        if asked.action is not None or stopped is not None:
            await self._tell(client, asked, user, words.gettext("This question no longer waits."))
            return None
        if user != asked.asker:
            await self._tell(client, asked, user, _only(words, asked.asker))
            return None
        return asked

    async def _answer(self, asked: Elicitation, action: str, content: str | None, by: str) -> None:
        store = self.store
        if await async_store(store).write(
            store.answer_elicitation, asked.team, asked.id, action, content, by
        ):
            log.info("question %d answered %s by %s", asked.id, action, by)

    async def _tell(self, client: AsyncWebClient, asked: Elicitation, user: str, text: str) -> None:
        try:
            await client.chat_postEphemeral(
                channel=asked.channel, user=user, text=text, thread_ts=asked.thread_ts or None
            )
        except SLACK_FAILURES as exc:
            log.warning(
                "could not tell %s about question %d: %s", user, asked.id, slack_reason(exc)
            )


def _only(words: Words, asker: str) -> str:
    return words.gettext("Only <@{asker}> can answer this.", asker=asker)


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
