"""The deployment files (Dockerfile, .dockerignore, .env.example, deploy/compose.yaml,
deploy/Caddyfile) agree with the app: the commands they run are the CLI's, the port and health
path the HTTP app's, the files they copy and mount exist, the extras are pyproject's, and
.env.example names every setting the app reads and nothing else. CI cannot build the image
(no container registry: docs/deployment.md), so this is what keeps them from drifting."""

from __future__ import annotations

import fnmatch
import re
import shlex
import tomllib
from typing import Any

import pytest
import yaml
from starlette.routing import Route

from assistant.cli import build_parser
from assistant.serving.http import create_web_app
from assistant.settings.environment import Settings, UsageSettings
from context.storage import database_url
from tests.cli import ROOT

DOCKERFILE = (ROOT / "Dockerfile").read_text(encoding="utf-8")
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
COMPOSE_PATH = ROOT / "deploy" / "compose.yaml"
COMPOSE: dict[str, Any] = yaml.safe_load(COMPOSE_PATH.read_text(encoding="utf-8"))
CADDYFILE = (ROOT / "deploy" / "Caddyfile").read_text(encoding="utf-8")
ENV_EXAMPLE = ROOT / ".env.example"
GUIDE = "".join(
    (ROOT / "docs" / page).read_text(encoding="utf-8")
    for page in ("deployment.md", "model-servers.md")
)


def instructions(name: str) -> list[str]:
    """The Dockerfile's instructions of one kind, their continuation lines joined."""
    joined = re.sub(r"\\\n\s*", " ", DOCKERFILE)
    return [
        line.split(None, 1)[1].strip()
        for line in joined.splitlines()
        if line.strip().upper().startswith(name + " ")
    ]


def exec_form(text: str) -> list[str]:
    assert text.startswith("["), f"not the exec form: {text}"
    return yaml.safe_load(text)


def routes() -> dict[str, set[str]]:
    """The HTTP app's paths and their methods, OAuth's included."""
    settings = Settings.read(
        _env_file=None,
        slack_signing_secret="s",
        slack_client_id="1.2",
        slack_client_secret="c",
        openai_api_key="k",
    )
    app = create_web_app(settings)
    return {r.path: set(r.methods or ()) for r in app.routes if isinstance(r, Route)}


def parses(argv: list[str]) -> Any:
    """The CLI's own parser takes these arguments (argparse exits on one it does not, and with
    status 0 after `--version` or `--help`)."""
    try:
        return build_parser().parse_args(argv)
    except SystemExit as exc:
        if exc.code == 0:
            return None
        raise AssertionError(f"`assistant {shlex.join(argv)}` is not a command") from exc


# --- the image ---------------------------------------------------------------------------


def test_the_files_the_image_copies_exist_and_reach_the_build():
    ignored = [
        line.strip()
        for line in (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    copies = instructions("COPY")
    assert copies
    for copy in copies:
        *sources, _ = copy.split()
        assert not any(s.startswith("--from") for s in sources)
        for source in sources:
            assert (ROOT / source).exists(), f"COPY {source}: no such file"
            # The last pattern that matches decides, as Docker reads .dockerignore.
            verdict = False
            for pattern in ignored:
                keep = pattern.startswith("!")
                if fnmatch.fnmatch(source.rstrip("/"), pattern.lstrip("!").rstrip("/")):
                    verdict = not keep
            assert not verdict, f"COPY {source}: .dockerignore leaves it out of the build"


def test_the_image_keeps_secrets_and_stores_out_of_the_build():
    ignored = (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
    assert ignored[ignored.index("*")] == "*"  # all out, then the sources named back in
    assert not any(line.lstrip("!").startswith((".env", "assistant.db")) for line in ignored)


def test_the_entrypoint_is_the_cli_and_its_command_is_one():
    assert exec_form(instructions("ENTRYPOINT")[0]) == ["assistant"]
    assert "assistant" in PYPROJECT["project"]["scripts"]
    (cmd,) = instructions("CMD")
    assert parses(exec_form(cmd)).command == "serve"


def test_the_image_serves_on_the_apps_port_and_checks_its_health_path():
    port = Settings.variables()["port"].info.default
    assert instructions("EXPOSE") == [str(port)]
    env = " ".join(instructions("ENV"))
    assert f"PORT={port}" in env
    (check,) = instructions("HEALTHCHECK")
    paths = re.findall(r"'(/[a-z_/]+)'", check)
    assert paths == ["/healthz"]
    assert "GET" in routes()["/healthz"]
    assert "os.environ.get('PORT', '3000')" in check and port == 3000


def test_the_image_runs_as_a_user_and_keeps_its_store_on_the_volume():
    assert instructions("USER") == ["aya"]
    assert "useradd" in " ".join(instructions("RUN")) and "aya" in " ".join(instructions("RUN"))
    env = " ".join(instructions("ENV"))
    url = re.search(r"DATABASE_URL=(\S+)", env)
    assert url is not None
    assert database_url(url.group(1)).database == "/data/assistant.db"
    assert instructions("VOLUME") == ['["/data"]']


def test_the_extras_the_image_installs_are_pyprojects():
    extras = set(PYPROJECT["project"]["optional-dependencies"]) - {"dev"}
    named = set(re.findall(r"EXTRAS=(\w+)", DOCKERFILE + GUIDE))
    assert named and named <= extras
    assert instructions("ARG").count('EXTRAS=""') == 1  # none by default


def test_the_base_image_has_the_python_the_project_requires():
    (base,) = [a for a in instructions("ARG") if a.startswith("PYTHON_IMAGE=")]
    version = re.search(r"python:(\d+)\.(\d+)", base)
    assert version is not None
    required = re.search(r">=(\d+)\.(\d+)", PYPROJECT["project"]["requires-python"])
    assert required is not None
    assert tuple(map(int, version.groups())) >= tuple(map(int, required.groups()))


# --- .env.example ------------------------------------------------------------------------


def readme_settings() -> set[str]:
    """The variables of the settings table (its first column) in docs/configuration.md."""
    readme = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    table = readme.split("## Configuration", 1)[1].split("\n\n### ", 1)[0]
    names: set[str] = set()
    for row in table.splitlines():
        if row.startswith("| `"):
            first = row.split("|")[1]
            names |= {n for n in re.findall(r"`([A-Z][A-Z0-9_]+)`", first)}
    return names


def example_lines() -> dict[str, str | None]:
    """Each variable of .env.example: its value, or None where the line is commented out."""
    found: dict[str, str | None] = {}
    for line in ENV_EXAMPLE.read_text(encoding="utf-8").splitlines():
        if match := re.fullmatch(r"(# )?([A-Z][A-Z0-9_]*)=(.*)", line):
            assert match.group(2) not in found, f"{match.group(2)} twice"
            found[match.group(2)] = None if match.group(1) else match.group(3)
    return found


def test_env_example_names_every_setting_and_nothing_else():
    fields = {name.upper() for name in (*Settings.variables(), *UsageSettings.model_fields)}
    readme = readme_settings()
    # The settings table names the OpenTelemetry SDK's own variables by one of them; the docs
    # name the others.
    docs = "".join(page.read_text(encoding="utf-8") for page in (ROOT / "docs").glob("*.md"))
    otel = set(re.findall(r"OTEL_[A-Z_]+[A-Z]", docs))
    listed = set(example_lines())
    assert fields <= listed, f"missing from .env.example: {sorted(fields - listed)}"
    assert readme <= listed, f"missing from .env.example: {sorted(readme - listed)}"
    unknown = listed - fields - otel
    assert not unknown, f"not settings of the app: {sorted(unknown)}"
    assert readme - otel <= fields, "the settings table names a setting the app does not read"


def test_env_example_leaves_secrets_blank_and_every_line_says_what_it_is():
    secrets = {
        name.upper()
        for name, variable in Settings.variables().items()
        if "SecretStr" in str(variable.info.annotation)
    }
    lines = ENV_EXAMPLE.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines):
        if match := re.fullmatch(r"(# )?([A-Z][A-Z0-9_]*)=(.*)", line):
            assert lines[number - 1].startswith("# ") and "=" not in lines[number - 1].split()[1]
            if match.group(2) in secrets:
                assert match.group(3) == "", f"{match.group(2)}: a secret with a value"


def test_env_example_as_it_is_changes_no_default(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in example_lines():
        monkeypatch.delenv(name, raising=False)
    (tmp_path / ".env").write_bytes(ENV_EXAMPLE.read_bytes())
    copied, defaults = Settings.read(), Settings.read(_env_file=None)
    assert {name: copied.value(name) for name in Settings.variables()} == {
        name: defaults.value(name) for name in Settings.variables()
    }
    assert copied.slack.oauth is False  # the blank client secret alone does not ask for OAuth


def test_commented_defaults_in_env_example_are_the_apps():
    for name, value in example_lines().items():
        if value is not None:
            continue
        line = next(
            line
            for line in ENV_EXAMPLE.read_text(encoding="utf-8").splitlines()
            if line.startswith(f"# {name}=")
        )
        shown = line.split("=", 1)[1]
        variable = Settings.variables().get(name.lower())
        if shown and variable is not None:
            assert str(Settings.read(_env_file=None, **{name.lower(): shown}).value(name)) == str(
                variable.info.get_default(call_default_factory=True)
            ), name


# --- deploy/compose.yaml and its Caddyfile ----------------------------------------------


def service(name: str) -> dict[str, Any]:
    return COMPOSE["services"][name]


def procfile() -> dict[str, list[str]]:
    lines = (ROOT / "Procfile").read_text(encoding="utf-8").splitlines()
    return {role: shlex.split(cmd) for role, cmd in (line.split(": ", 1) for line in lines if line)}


def test_compose_runs_the_procfiles_ingress_and_worker():
    roles = procfile()
    ingress, worker = parses(service("ingress")["command"]), parses(service("worker")["command"])
    assert ingress.command == "serve" and ingress.runs == "off"
    assert worker.command == "worker"
    assert vars(ingress) == vars(parses(roles["web"][1:]))
    assert vars(worker) == vars(parses(roles["worker"][1:]))


def test_compose_builds_this_image_and_gives_the_roles_postgresql():
    for name in ("ingress", "worker"):
        app = service(name)
        assert (COMPOSE_PATH.parent / app["build"]["context"] / "Dockerfile").is_file()
        url = re.sub(r"\$\{[^}]+\}", "pw", app["environment"]["DATABASE_URL"])
        assert database_url(url).get_backend_name() == "postgresql"
        assert database_url(url).host == "db" and database_url(url).database == "aya"
        assert app["depends_on"]["db"]["condition"] == "service_healthy"
        assert app["env_file"][0]["path"] == "../.env" and ENV_EXAMPLE.is_file()
        # SIGTERM ends a process within 10 s (docs/operations.md, "Running").
        assert int(app["stop_grace_period"].rstrip("s")) > 10
    db = service("db")["environment"]
    assert (db["POSTGRES_USER"], db["POSTGRES_DB"]) == ("aya", "aya")


def test_compose_checks_health_where_there_is_some_and_restarts_everything():
    assert service("worker")["healthcheck"] == {"disable": True}  # it serves no HTTP
    assert "healthcheck" not in service("ingress")  # the image's, on /healthz
    assert service("caddy")["depends_on"]["ingress"]["condition"] == "service_healthy"
    assert service("db")["healthcheck"]["test"][1] == "pg_isready"
    for name in COMPOSE["services"]:
        assert service(name)["restart"] == "unless-stopped", name


def test_compose_mounts_what_exists_and_declares_its_volumes():
    for name, spec in COMPOSE["services"].items():
        for volume in spec.get("volumes", []):
            source = volume.split(":")[0]
            if source.startswith("."):
                assert (COMPOSE_PATH.parent / source).exists(), f"{name}: {source}"
            else:
                assert source in COMPOSE["volumes"], f"{name}: {source}"


def test_caddy_passes_the_apps_slack_paths_to_the_ingress_port():
    port = Settings.variables()["port"].info.default
    assert service("ingress")["expose"] == [str(port)]
    upstreams = re.findall(r"reverse_proxy (\S+)", CADDYFILE)
    assert upstreams == [f"ingress:{port}"]
    passed = set(re.search(r"@slack path (.+)", CADDYFILE).group(1).split())  # type: ignore[union-attr]
    app = routes()
    assert passed == set(app) - {"/healthz"}
    assert re.findall(r"health_uri (\S+)", CADDYFILE) == ["/healthz"]


# --- the guide ---------------------------------------------------------------------------


def guide_commands() -> list[list[str]]:
    """Every `assistant …` command the guide shows, and those run in a container of the
    image (`docker run … aya ARGS`, `compose run … worker ARGS`)."""
    found = []
    for block in re.findall(r"```sh\n(.*?)```", GUIDE, re.DOTALL):
        for line in re.sub(r"\\\n\s*", " ", block).splitlines():
            line = line.split(" #", 1)[0].strip()
            if line.startswith("assistant "):
                found.append(shlex.split(line)[1:])
            elif match := re.match(r"docker compose .* run --rm --no-deps worker (.+)", line):
                found.append(shlex.split(match.group(1)))
    for match in re.findall(r"`docker run aya ([^`]+)`", GUIDE):
        found.append(shlex.split(match))
    return found


@pytest.mark.parametrize("argv", guide_commands(), ids=shlex.join)
def test_the_guides_commands_are_the_clis(argv):
    parses(argv)


def test_the_guide_shows_the_commands():
    assert len(guide_commands()) >= 5
