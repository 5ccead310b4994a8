"""People's own language (issue 37; docs/configuration.md, "Languages"), through the real app and
the fakes: a person whose Slack is in Portuguese is told the apology, shown the task cards, the
feedback buttons, the panel's greeting and prompts and the Home tab in Portuguese; a channel set
to Japanese shows Japanese to everyone; a Slack language with no catalog falls back to the
workspace default's, then the deployment's, then English; and the log is the same whatever the
language, less the one entry that tells the model the person's Slack language."""

from __future__ import annotations

import json

import pytest

from assistant.fakes import ids
from assistant.fakes.events.home import app_home_opened, view_submission
from assistant.fakes.openai import responses as replies
from assistant.i18n.words import Words
from assistant.run.loop.apologies import SORRY_MODEL
from assistant.run.loop.channel_access import NOTE
from context.channels import WORKSPACE_DEFAULT, ChannelConfig
from tests.app.test_app_home import open_home, open_modal
from tests.app.test_channel_settings import ADMIN, interact
from tests.app.test_model_failures import answered
from tests.app.test_panel import contents, opened, panel_key
from tests.harness import mention as say
from tests.harness import thread_of

# How events and clicks are handled, not served: the Bolt tier (tests/bolt_tier.py).
pytestmark = [pytest.mark.app_backend, pytest.mark.listeners]

PORTUGUESE_SORRY = (
    "Desculpe, não consegui obter uma resposta do modelo de linguagem agora. "
    "Tente de novo daqui a pouco."
)
JAPANESE_SORRY = (
    "申し訳ありません。現在、言語モデルから回答を得られませんでした。"
    "しばらくしてからもう一度お試しください。"
)
SPANISH_SORRY = (
    "Lo siento, no pude obtener una respuesta del modelo de lenguaje en este momento. "
    "Vuelve a intentarlo en un rato."
)
OTHER = "U0OTHERUS1"
LOCALE_LINE = f"<@{ids.USER_ID}> uses Slack in pt-BR; the app shows them its own words in pt_BR."


def speaks(slack, locale: str, user: str = ids.USER_ID) -> None:
    """The person's Slack language, as users.info gives it with include_locale."""
    slack.add_user(user, "alice", locale=locale)


def configure(app, channel: str, **fields: object) -> None:
    app.assistant.store.set_channel_config(
        ChannelConfig(team=ids.TEAM_ID, channel=channel, **fields)
    )


def apology_in(app, slack, model, user: str = ids.USER_ID) -> tuple[str, list[dict]]:
    """A run the model fails: what the thread was told, and the log."""
    model.script(replies.error(500, times=2))
    log = answered(app, slack, event=say(slack, "oi, tudo bem?", user=user))
    posted = slack.calls_to("chat.postMessage")[-1]
    return posted.params["text"], log


def test_a_portuguese_speaker_is_told_the_apology_in_portuguese_and_the_log_in_english(
    make_app, slack, model
):
    speaks(slack, "pt-BR")
    app = make_app(openai_max_retries=1)
    told, log = apology_in(app, slack, model)
    assert told == PORTUGUESE_SORRY
    # The model is told the person's Slack language, before what it answers; the log keeps
    # the apology's source text.
    assert [e["content"] for e in log if e["role"] == "system"][1:] == [
        LOCALE_LINE,
        "Error: the model call failed: the model service answered HTTP 500: The server had "
        f'an error (server_error). The user was told: "{SORRY_MODEL.english()}"',
    ]
    asked = [c for c in slack.calls_to("users.info") if c.params.get("include_locale")]
    assert [c.params["user"] for c in asked] == [ids.USER_ID]


def test_the_log_is_the_same_whatever_the_language(make_app, slack, model):
    speaks(slack, "pt-BR")
    speaks(slack, "en-US", OTHER)
    app = make_app(openai_max_retries=1)
    told_pt, portuguese = apology_in(app, slack, model)
    told_en, english = apology_in(app, slack, model, OTHER)
    assert (told_pt, told_en) == (PORTUGUESE_SORRY, SORRY_MODEL.english())

    def contents(log: list[dict]) -> list[str]:
        """The entries but their times, the person named alike."""
        return [
            json.dumps(e["content"]).replace(OTHER, ids.USER_ID)
            for e in log
            if e["content"] != LOCALE_LINE
        ]

    assert contents(portuguese) == contents(english)
    assert LOCALE_LINE in [e["content"] for e in portuguese]


def test_a_channel_set_to_japanese_shows_japanese_to_a_portuguese_speaker(make_app, slack, model):
    speaks(slack, "pt-BR")
    app = make_app(openai_max_retries=1)
    configure(app, ids.CHANNEL_ID, locale="ja")
    told, log = apology_in(app, slack, model)
    assert told == JAPANESE_SORRY
    assert f'The user was told: "{SORRY_MODEL.english()}"' in log[-1]["content"]
    # The model still learns the person's own Slack language, and what they were shown.
    assert f"<@{ids.USER_ID}> uses Slack in pt-BR; the app shows them its own words in ja." in [
        e["content"] for e in log
    ]


@pytest.mark.parametrize(
    ("workspace", "deployment", "shown"),
    [
        pytest.param("es", "ja", SPANISH_SORRY, id="the-workspace-default-s"),
        pytest.param(None, "ja", JAPANESE_SORRY, id="the-deployment-s"),
        pytest.param(None, "en", SORRY_MODEL.english(), id="english"),
    ],
)
def test_a_slack_language_with_no_catalog_falls_back(
    make_app, slack, model, workspace, deployment, shown
):
    speaks(slack, "fr-FR")
    app = make_app(openai_max_retries=1, assistant_locale=deployment)
    if workspace is not None:
        configure(app, WORKSPACE_DEFAULT, locale=workspace)
    told, _ = apology_in(app, slack, model)
    assert told == shown


def test_task_cards_and_feedback_buttons_are_in_the_person_s_language(make_app, slack, model):
    speaks(slack, "pt-BR")
    app = make_app(assistant_stream="auto")
    model.script(
        replies.tool_calls(("getThreadHistory", {"reasoning": "r"})),
        replies.tool_calls(("postMessage", {"text": "Pronto", "reasoning": "r"})),
        replies.tool_calls(("finishRequest", {"reasoning": "r"})),
    )
    event = say(slack, "o que decidimos?")
    assert app.send_event(event).status == 200
    slack.wait_for_call("reactions.remove")
    app.wait_idle()
    (start,) = slack.calls_to("chat.startStream")
    assert [c["title"] for c in start.params["chunks"]] == ["Lendo a conversa"]
    stopped = slack.calls_to("chat.stopStream")[-1]
    labels = [
        button["accessibility_label"]
        for block in stopped.params["blocks"]
        for element in block.get("elements", [])
        for button in (element.get("positive_button"), element.get("negative_button"))
        if button
    ]
    assert labels == ["Esta resposta foi útil", "Esta resposta não foi útil"]
    # The log holds the calls as the model made them, nothing translated.
    log = app.log(thread_of(event))
    assert [e["content"].get("toolCall") for e in log if e["role"] == "assistant"] == [
        "getThreadHistory", "postMessage", "finishRequest",
    ]  # fmt: skip


def test_the_home_tab_is_in_the_viewer_s_language(make_app, slack, model):
    speaks(slack, "pt-BR")
    app = make_app()
    assert app.send_event(app_home_opened(user=ids.USER_ID)).status == 200
    slack.wait_for_call("views.publish")
    tab = slack.home_tabs[ids.USER_ID]
    texts = [block.get("text", {}).get("text") for block in tab["blocks"]]
    assert texts[0] == "Configurações do canal"
    assert texts[1].startswith("*Padrão do workspace*: nada definido")
    assert Words("pt_BR").gettext(
        "Only workspace admins, and the people they name, can change these settings."
    ) in str(tab["blocks"][-1])


def test_a_refused_person_is_told_in_their_language(make_app, slack, model):
    speaks(slack, "es-ES")
    app = make_app()
    configure(app, ids.CHANNEL_ID, access="listed", users=("U0SOMEONE1",))
    assert app.send_event(say(slack, "hola")).status == 200
    app.wait_idle()
    assert [(e["user"], e["text"]) for e in slack.ephemerals] == [
        (ids.USER_ID, Words("es").gettext(NOTE))
    ]
    assert Words("es").gettext(NOTE).startswith("Lo siento, no estoy disponible")


def test_an_admin_fixes_a_channel_s_language_in_the_app_home_modal_shown_in_theirs(
    make_app, slack, model
):
    slack.add_user(ADMIN, "ada", is_admin=True, locale="ja-JP")
    app = make_app()
    configure(app, ids.CHANNEL_ID, model="gpt-x")
    tab = open_home(app, slack, ADMIN)
    modal = open_modal(app, slack, tab, ids.CHANNEL_ID, ADMIN)
    assert modal["title"]["text"] == "チャンネル設定" and modal["submit"]["text"] == "保存する"
    (language,) = [b for b in modal["blocks"] if b["block_id"] == "locale"]
    assert language["label"]["text"] == "メッセージの言語"
    offered = [(o["value"], o["text"]["text"]) for o in language["element"]["options"]]
    assert offered[1:] == [
        ("en", "English"), ("pt_BR", "Português (Brasil)"), ("es", "Español"), ("ja", "日本語"),
    ]  # fmt: skip
    chosen = {"type": "static_select", "selected_option": {"value": "pt_BR"}}
    status, answer = interact(app, view_submission(slack, modal, {"locale": chosen}, user=ADMIN))
    assert (status, answer) == (200, {})
    saved = app.assistant.store.channel_config(ids.TEAM_ID, ids.CHANNEL_ID)
    assert (saved.locale, saved.model) == ("pt_BR", "gpt-x")
    # A forged language no catalog has is refused under its field, in the admin's language.
    forged = {"type": "static_select", "selected_option": {"value": "fr"}}
    status, answer = interact(app, view_submission(slack, modal, {"locale": forged}, user=ADMIN))
    assert answer == {"response_action": "errors", "errors": {"locale": "言語 fr はありません。"}}
    assert app.assistant.store.channel_config(ids.TEAM_ID, ids.CHANNEL_ID).locale == "pt_BR"
    # A value the settings' own checks refuse: their English detail, in the admin's words.
    icon = {"type": "plain_text_input", "value": "robot"}
    status, answer = interact(app, view_submission(slack, modal, {"icon_emoji": icon}, user=ADMIN))
    assert answer["response_action"] == "errors"
    assert answer["errors"]["icon_emoji"].startswith("無効な値です: ")


def test_the_panel_greets_a_portuguese_speaker_in_portuguese_and_logs_english(
    make_app, slack, model
):
    speaks(slack, "pt-BR")
    app = make_app()
    started = opened(app, slack)
    key = panel_key(started)
    assert slack.calls_to("chat.postMessage")[0].params["text"] == (
        "Olá, eu sou Aya. Como posso ajudar?"
    )
    shown = slack.assistant_threads.prompts(key.channel, key.thread_ts).prompts
    assert (shown[0]["title"], shown[0]["message"]) == (
        "Explicar algo",
        "Explique como o DNS funciona, em poucos parágrafos curtos.",
    )
    greeted = contents(app, key)[2]
    assert greeted.startswith(
        f"The app greeted <@{ids.USER_ID}> (its words, not the model's): "
        '"Hi, I\'m Aya. How can I help?"\n'
        'Suggested prompts shown: "Explain something" (sends "Explain how DNS works'
    )


def test_what_the_operator_sets_is_shown_as_written(make_app, slack, model):
    speaks(slack, "ja-JP")
    app = make_app(assistant_greeting="Bom dia!")
    opened(app, slack)
    assert slack.calls_to("chat.postMessage")[0].params["text"] == "Bom dia!"
