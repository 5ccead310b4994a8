"""manifest.yml: every bot scope the code needs and no more, exactly the events the
listeners handle, a bot user that takes DMs, Socket Mode on, the agent view (not the older
assistant view) with the default suggested prompts, interactivity on exactly when a listener
takes block actions."""

from __future__ import annotations

import ast
import inspect
import re
from functools import cache
from pathlib import Path

import yaml
from slack_sdk.web.async_client import AsyncWebClient

from assistant.settings.panel import DEFAULT_PROMPTS, MAX_PROMPTS
from tests.cli import ROOT

SOURCE = ROOT / "assistant"
MANIFEST = yaml.safe_load((ROOT / "manifest.yml").read_text(encoding="utf-8"))

HISTORY = {"channels:history", "groups:history", "im:history", "mpim:history"}

# Web API method (slack-sdk name) -> the bot scopes it needs (api.slack.com/methods). A method
# the code calls must be listed here; listing more is harmless.
METHOD_SCOPES: dict[str, set[str]] = {
    "auth_test": set(),
    # Socket Mode: called with the app-level token, whose scope (connections:write) is set on
    # the token itself, not in the manifest's bot scopes.
    "apps_connections_open": set(),
    "chat_postMessage": {"chat:write"},
    "chat_update": {"chat:write"},
    "chat_delete": {"chat:write"},
    "chat_startStream": {"chat:write"},
    "chat_appendStream": {"chat:write"},
    "chat_stopStream": {"chat:write"},
    "chat_getPermalink": set(),
    "conversations_replies": HISTORY,
    "conversations_history": HISTORY,
    "conversations_info": {"channels:read", "groups:read", "im:read", "mpim:read"},
    "conversations_members": {"channels:read", "groups:read", "im:read", "mpim:read"},
    # The App Home asks for a person's public and private channels only.
    "users_conversations": {"channels:read", "groups:read"},
    "reactions_add": {"reactions:write"},
    "reactions_remove": {"reactions:write"},
    "users_info": {"users:read"},
    "files_info": {"files:read"},
    "assistant_threads_setStatus": {"assistant:write"},
    "assistant_threads_setSuggestedPrompts": {"assistant:write"},
    "assistant_threads_setTitle": {"assistant:write"},
    "chat_postEphemeral": {"chat:write"},
    "views_publish": set(),
    "views_open": set(),
    "usergroups_users_list": {"usergroups:read"},
    # Agent sessions: thread-based ones need chat:write (docs.slack.dev "Agent sessions").
    "agents_sessions_setStatus": {"chat:write"},
    # Real-time search: one scope a conversation type the channels' settings may allow
    # (docs.slack.dev "Using the Real-time Search API", its required scopes).
    "assistant_search_context": {
        "search:read.public",
        "search:read.private",
        "search:read.mpim",
        "search:read.im",
    },
    "agents_sessions_rename": {"chat:write"},
}

# Bolt's helpers that a listener may take instead of calling a method by name -> the method.
BOLT_HELPERS: dict[str, str] = {
    "AsyncSay": "chat_postMessage",
    "AsyncSetStatus": "assistant_threads_setStatus",
    "AsyncSetSuggestedPrompts": "assistant_threads_setSuggestedPrompts",
    "AsyncSetTitle": "assistant_threads_setTitle",
}

# Bolt's assistant listeners (`AsyncAssistant`'s decorators) -> the event type each takes.
ASSISTANT_LISTENERS: dict[str, str] = {
    "thread_started": "assistant_thread_started",
    "thread_context_changed": "assistant_thread_context_changed",
    "user_message": "message",
    "bot_message": "message",
}

# Event type a listener handles -> the bot events to subscribe to for it.
LISTENER_EVENTS: dict[str, set[str]] = {
    "app_mention": {"app_mention"},
    "message": {"message.channels", "message.groups", "message.im", "message.mpim"},
    "member_joined_channel": {"member_joined_channel"},
    "assistant_thread_started": {"assistant_thread_started"},
    "assistant_thread_context_changed": {"assistant_thread_context_changed"},
    "app_home_opened": {"app_home_opened"},
    "app_context_changed": {"app_context_changed"},
    "agent_session_stopped": {"agent_session_stopped"},
    "agent_session_title_changed": {"agent_session_title_changed"},
    "app_uninstalled": {"app_uninstalled"},
    "tokens_revoked": {"tokens_revoked"},
}

# Bot event -> the bot scope Slack requires to deliver it.
EVENT_SCOPES: dict[str, set[str]] = {
    "app_mention": {"app_mentions:read"},
    "message.channels": {"channels:history"},
    "message.groups": {"groups:history"},
    "message.im": {"im:history"},
    "message.mpim": {"mpim:history"},
    "member_joined_channel": {"channels:read", "groups:read"},
    # Slack delivers the panel's events to apps with the assistant:write scope.
    "assistant_thread_started": {"assistant:write"},
    "assistant_thread_context_changed": {"assistant:write"},
    # Slack sends app_home_opened to every app with a bot user: no scope of its own.
    "app_home_opened": set(),
    # The agent view's events come with the agent's scope, as the panel's did.
    "app_context_changed": {"assistant:write"},
    # … and the stop button's to an app declared as an agent (which adds assistant:write).
    "agent_session_stopped": {"assistant:write"},
    "agent_session_title_changed": {"assistant:write"},
    # Sent to every app: no scope of their own.
    "app_uninstalled": set(),
    "tokens_revoked": set(),
}


@cache
def sources() -> dict[Path, str]:
    return {path: path.read_text(encoding="utf-8") for path in sorted(SOURCE.rglob("*.py"))}


def web_api_methods() -> set[str]:
    """slack-sdk's Web API methods: AsyncWebClient's public coroutines but its generic one."""
    return {
        name
        for name in dir(AsyncWebClient)
        if not name.startswith("_")
        and name != "api_call"
        and inspect.iscoroutinefunction(getattr(AsyncWebClient, name))
    }


@cache
def called_methods() -> frozenset[str]:
    """Every Web API method named as a word anywhere in assistant/ (attribute calls, and the
    `getattr(client, "reactions_add")` strings alike), and those behind Bolt's helpers."""
    words = {word for text in sources().values() for word in re.findall(r"\w+", text)}
    helped = {method for helper, method in BOLT_HELPERS.items() if helper in words}
    return frozenset(web_api_methods() & words | helped)


@cache
def handled_event_types() -> frozenset[str]:
    """The `type` of every `@app.event(...)` listener (a string, or a dict's "type") and of
    every assistant listener (`@assistant.thread_started`, …)."""
    types = set()
    for path, text in sources().items():
        for node in ast.walk(ast.parse(text, str(path))):
            if isinstance(node, ast.Attribute) and node.attr in ASSISTANT_LISTENERS:
                types.add(ASSISTANT_LISTENERS[node.attr])
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "event"
                and node.args
            ):
                continue
            matcher = node.args[0]
            if isinstance(matcher, ast.Dict):  # {"type": "message", "subtype": ...}
                keys = [ast.literal_eval(k) if k is not None else None for k in matcher.keys]
                matcher = matcher.values[keys.index("type")]
            types.add(ast.literal_eval(matcher))
    return frozenset(types)


def test_the_method_list_is_slack_sdks():
    methods = web_api_methods()
    assert {"chat_postMessage", "conversations_replies", "reactions_add"} <= methods
    assert len(methods) > 200


def test_the_scan_finds_the_methods_the_app_is_known_to_call():
    called = called_methods()
    # Spelled as attributes (chat_postMessage) and as getattr strings (reactions_add).
    assert {"chat_postMessage", "conversations_replies", "reactions_add", "reactions_remove"} <= (
        called
    )


def test_no_web_api_call_hides_behind_api_call():
    for path, text in sources().items():
        assert not re.search(r"\bapi_call\b", text), (
            f"{path.relative_to(ROOT)} calls api_call: name the method instead, so this test "
            "can check its scopes"
        )


def test_every_called_method_has_known_scopes():
    missing = called_methods() - set(METHOD_SCOPES)
    assert not missing, f"add the bot scopes of {sorted(missing)} to METHOD_SCOPES"


def test_the_event_listeners_are_understood():
    types = handled_event_types()
    assert {"app_mention", "message"} <= types
    unknown = types - set(LISTENER_EVENTS)
    assert not unknown, f"add the bot events for {sorted(unknown)} to LISTENER_EVENTS"


def subscribed_events() -> set[str]:
    return set(MANIFEST["settings"]["event_subscriptions"]["bot_events"])


def test_bot_events_are_exactly_those_the_listeners_handle():
    expected = set().union(*(LISTENER_EVENTS[t] for t in handled_event_types()))
    assert subscribed_events() == expected
    assert len(MANIFEST["settings"]["event_subscriptions"]["bot_events"]) == len(expected)


def downloads_files() -> bool:
    """Whether the code fetches files' private URLs (which needs files:read, not a method)."""
    return any(re.search(r"\burl_private\b", text) for text in sources().values())


def test_the_scan_finds_the_file_downloads():
    assert downloads_files()


def customizes_posts() -> bool:
    """Whether posts carry a name and icon of their own (chat:write.customize, no method)."""
    return any(re.search(r"\bpost_as\b", text) for text in sources().values())


def test_the_scan_finds_the_customized_posts_and_the_home_tab():
    assert customizes_posts()
    assert "app_home_opened" in handled_event_types()


def test_the_home_tab_is_on_exactly_when_a_listener_publishes_it():
    home = MANIFEST["features"]["app_home"]["home_tab_enabled"]
    assert home is ("app_home_opened" in handled_event_types())
    assert home is ("views_publish" in called_methods())


def test_bot_scopes_are_exactly_what_the_code_needs():
    # (a method missing from METHOD_SCOPES fails the test above)
    needed = set().union(*(METHOD_SCOPES.get(m, set()) for m in called_methods()))
    needed |= {"files:read"} if downloads_files() else set()
    needed |= {"chat:write.customize"} if customizes_posts() else set()
    needed |= set().union(*(EVENT_SCOPES[e] for e in subscribed_events()))
    scopes = MANIFEST["oauth_config"]["scopes"]["bot"]
    assert len(scopes) == len(set(scopes)), "a scope is listed twice"
    assert sorted(set(scopes) - needed) == [], "scopes the code does not need"
    assert sorted(needed - set(scopes)) == [], "scopes the code needs"
    assert "user" not in MANIFEST["oauth_config"]["scopes"]  # no user token is used


def test_the_bot_takes_direct_messages_and_socket_mode_is_on():
    assert MANIFEST["features"]["bot_user"]["display_name"]
    app_home = MANIFEST["features"]["app_home"]
    assert app_home["messages_tab_enabled"] is True
    assert app_home["messages_tab_read_only_enabled"] is False
    assert MANIFEST["settings"]["socket_mode_enabled"] is True
    assert MANIFEST["display_information"]["name"]


def action_listeners() -> int:
    """How many `@app.action(...)` listeners (block actions) the app has."""
    return sum(
        1
        for path, text in sources().items()
        for node in ast.walk(ast.parse(text, str(path)))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "action"
    )


def test_the_scans_find_the_panel_the_messages_tab_and_the_feedback_buttons():
    assert {
        "assistant_thread_started",
        "assistant_thread_context_changed",
        "app_home_opened",
        "app_context_changed",
    } <= handled_event_types()
    assert {"assistant_threads_setSuggestedPrompts", "assistant_threads_setTitle"} <= (
        called_methods()
    )
    assert action_listeners() >= 1


def test_interactivity_is_on_exactly_when_a_listener_takes_block_actions():
    assert MANIFEST["settings"]["interactivity"]["is_enabled"] is (action_listeners() > 0)


def test_the_agent_view_is_on_with_the_default_suggested_prompts():
    assert "assistant_view" not in MANIFEST["features"]  # replaced by agent_view
    view = MANIFEST["features"]["agent_view"]
    assert set(view) == {"agent_description", "suggested_prompts"}
    assert view["agent_description"].strip()
    assert len(view["suggested_prompts"]) <= MAX_PROMPTS
    assert view["suggested_prompts"] == [prompt.model_dump() for prompt in DEFAULT_PROMPTS]
