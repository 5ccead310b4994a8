"""The import graph: data flows one way (docs/architecture.md), so no two of the project's
modules import each other, directly or round a loop, and the log's core stays free of Slack,
OpenAI and the app."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("context", "assistant", "bench")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {
        _module_name(path): path
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
        if "migrations" not in path.parts
    }


def _imported(path: Path, name: str, modules: dict[str, Path]) -> Iterator[str]:
    """Every module `path` imports, TYPE_CHECKING imports included: a cycle that only type
    hints close is still two modules that need each other."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                # `from package import module` needs the module, not the package's __init__.
                submodule = f"{base}.{alias.name}"
                yield submodule if submodule in modules else base


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    return {
        name: {target for target in _imported(path, name, modules) if target in modules} - {name}
        for name, path in modules.items()
    }


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycles():
    assert cycles(import_graph()) == []


def test_cycle_detection_finds_a_loop():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_context_imports_no_slack_openai_or_app():
    forbidden = ("slack_sdk", "slack_bolt", "openai", "aiohttp", "assistant", "bench")
    modules = _modules()
    offenders = [
        f"{name} imports {target}"
        for name, path in modules.items()
        if name.split(".")[0] == "context"
        for target in _imported(path, name, modules)
        if target.split(".")[0] in forbidden
    ]
    assert offenders == []


# The rooms of `assistant/` (docs/architecture.md#packages), from the bottom up, and the rooms
# each may import. An import against this order is a room reaching back up the chain.
ALLOWED: dict[str, set[str]] = {
    "context": set(),
    "fakes": set(),  # they play Slack and OpenAI: nothing of the app
    "i18n": set(),  # the bot's words in people's languages: Babel, nothing of the app
    "slack": {"context"},
    "model": {"context"},
    "mcp": {"context"},  # the MCP edge: the SDK's client, the servers' tools
    "run": {"i18n", "mcp", "slack", "model", "context"},
    # Routines: when each is due, the tick that claims it; their runs go through `run`.
    "routines": {"i18n", "run", "mcp", "slack", "model", "context"},
    # OpenTelemetry: it watches runs, model calls and Slack through their small protocols.
    "telemetry": {"run", "mcp", "slack", "model", "context"},
    "settings": {"i18n", "run", "mcp", "slack", "model", "context"},
    "intake": {"i18n", "settings", "run", "mcp", "slack", "model", "context"},
    "panel": {"i18n", "intake", "settings", "run", "mcp", "slack", "model", "context"},
    "replay": {"i18n", "settings", "run", "mcp", "slack", "model", "context"},
    "eval": {"i18n", "replay", "settings", "run", "mcp", "slack", "model", "context"},
    "wiring": {
        "routines",
        "i18n",
        "panel",
        "intake",
        "settings",
        "telemetry",
        "run",
        "mcp",
        "slack",
        "model",
        "context",
    },
    "serving": {"wiring", "routines", "settings", "telemetry", "slack", "context", "fakes"},
    # The CLI: everything, and the fakes for `replay --demo-model`.
    "commands": {
        "serving",
        "routines",
        "eval",
        "replay",
        "wiring",
        "panel",
        "intake",
        "settings",
        "telemetry",
        "run",
        "i18n",
        "mcp",
        "slack",
        "model",
        "context",
        "fakes",
    },
}


def room_of(module: str) -> str | None:
    """The room a module of `context` or `assistant` belongs to (None: bench, tests)."""
    parts = module.split(".")
    if parts[0] == "context":
        return "context"
    if parts[0] != "assistant" or len(parts) == 1:
        return "commands" if parts == ["assistant"] else None
    top = parts[1]
    rooms = (
        "slack",
        "model",
        "mcp",
        "run",
        "routines",
        "intake",
        "panel",
        "replay",
        "eval",
        "serving",
        "fakes",
        "telemetry",
        "i18n",
    )
    if top in rooms:
        return top
    if top == "settings":
        return "settings"
    if top in ("app", "app_oauth", "listeners"):
        return "wiring"
    if top in ("cli", "commands"):
        return "commands"
    raise AssertionError(f"{module} is in no room: add it to ALLOWED and room_of")


def against_the_rooms(graph: dict[str, set[str]]) -> list[str]:
    offenders = []
    for name, targets in sorted(graph.items()):
        room = room_of(name)
        if room is None:
            continue
        for target in sorted(targets):
            other = room_of(target)
            if other is not None and other != room and other not in ALLOWED[room]:
                offenders.append(f"{name} ({room}) imports {target} ({other})")
    return offenders


def test_rooms_import_one_way():
    assert against_the_rooms(import_graph()) == []


def test_rooms_rule_finds_an_import_back_up():
    graph = {
        "assistant.slack.client": {"assistant.run.loop.agent"},
        "assistant.run.loop.agent": set(),
    }
    assert against_the_rooms(graph) == [
        "assistant.slack.client (slack) imports assistant.run.loop.agent (run)"
    ]


def test_every_room_may_import_only_rooms_below_it():
    # The allowed imports form no loop: the rooms are layers.
    graph = {room: set(allowed) for room, allowed in ALLOWED.items()}
    assert cycles(graph) == []


# Inside a room, its sub-rooms are layers too, named from the bottom up: a module of one may
# import its own sub-room and those named before it, never one named after (an arrow back up).
# A room's loose modules left unnamed are its base: any sub-room may import them, and they
# import no named sub-room. `assistant` itself is ordered by ALLOWED above.
SUB_ROOMS: dict[str, list[str]] = {
    # run/: what applies in a channel; what every part of a run uses; approvals; what Slack
    # shows; streamed posts; the tools; the agent loop; the stop button; the scheduler; the
    # live judge.
    "assistant.run": [
        "channels",
        "core",
        "approvals",
        "progress",
        "streaming",
        "tools",
        "loop",
        "stopping",
        "scheduling",
        "judging",  # live answers judged, after the scheduler's runs
    ],
    # The fakes' base: ids, the background server, Slack's signed deliveries (requests.py).
    "assistant.fakes": ["openai", "slack", "events", "demo"],
    # The handlers; `parts.py` names the parts they act through (one is an events' module's).
    "assistant.listeners": ["events", "assistant", "actions", "shortcuts", "home", "parts"],
    # mcp/: the file's models, the redaction of secrets, the transports, one connection, the
    # tools' room in a request, people's sign-ins (signin/), the servers' registry, the check.
    "assistant.mcp": [
        "config",
        "redaction",
        "transports",
        "connection",
        "room",
        "signin",
        "servers",
        "check",
    ],
    # The log's core, then its storage, then the trace that prints what the store gives back.
    "context": ["storage", "trace"],
}


def _sub_room(module: str, room: str) -> str | None:
    """The sub-room of `room` a module is in: the next part of its name (None: the room's
    own `__init__`, which says what the room holds and may gather all of it)."""
    if not module.startswith(room + "."):
        return None
    return module[len(room) + 1 :].split(".")[0]


def against_the_sub_rooms(
    graph: dict[str, set[str]], sub_rooms: dict[str, list[str]] = SUB_ROOMS
) -> list[str]:
    offenders = []
    for room, order in sub_rooms.items():
        rank = {name: place for place, name in enumerate(order)}
        for name, targets in sorted(graph.items()):
            mine = _sub_room(name, room)
            if mine is None:
                continue
            for target in sorted(targets):
                theirs = _sub_room(target, room)
                if theirs is None or theirs == mine or theirs not in rank:
                    continue
                if mine not in rank or rank[theirs] > rank[mine]:
                    offenders.append(f"{name} ({mine}) imports {target} ({theirs}) in {room}")
    return offenders


def test_sub_rooms_import_one_way():
    assert against_the_sub_rooms(import_graph()) == []


def test_sub_rooms_rule_finds_an_import_back_up():
    # The scheduler builds agents; an agent reaching up to the scheduler is refused, and so
    # is a loose module (the base) reaching up to a named sub-room.
    graph = {
        "assistant.run.loop.agent": {"assistant.run.scheduling.scheduler"},
        "assistant.run.scheduling.scheduler": {"assistant.run.loop.agent"},
        "assistant.run.helpers": {"assistant.run.core.recorder"},
        "assistant.run.core.recorder": {"assistant.run.helpers"},
    }
    assert against_the_sub_rooms(graph) == [
        "assistant.run.helpers (helpers) imports assistant.run.core.recorder (core) in "
        "assistant.run",
        "assistant.run.loop.agent (loop) imports assistant.run.scheduling.scheduler "
        "(scheduling) in assistant.run",
    ]


def test_every_room_with_sub_rooms_orders_them():
    # A new sub-package must be given its place: else nothing would keep its arrows one way.
    modules = _modules()
    packages = {name for name, path in modules.items() if path.name == "__init__.py"}
    unordered = []
    for package in sorted(packages):
        subs = {p.rpartition(".")[2] for p in packages if p.rpartition(".")[0] == package}
        if not subs or package == "assistant":
            continue
        missing = subs - set(SUB_ROOMS.get(package, []))
        if missing:
            unordered.append(f"{package}: {sorted(missing)}")
    assert unordered == []
