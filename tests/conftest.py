"""Shared fixtures: store backends (SQLite file, PostgreSQL schema)."""

from __future__ import annotations

import os
import shutil
import signal
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.exc import OperationalError

from assistant.fakes import FakeOpenAI, FakeSlack, ids
from context.storage import Store, database_url, open_store
from context.tokens import counter_for
from tests.bolt_tier import DispatchedApp, Role
from tests.harness import RunningApp, app_settings

DEFAULT_POSTGRES = "postgresql://postgres@127.0.0.1:5432/postgres"

# The suite fails if it leaves files in the checkout (tests/tree_check.py), or a process
# running (tests/process_check.py), or if a test outside tests/processes/ starts a process
# (tests/tier_check.py).
pytest_plugins = ["tests.tree_check", "tests.process_check", "tests.tier_check"]

# Hypothesis, as the suite runs it: the same on a busy machine as on a quiet one. No
# deadline on an example, no health check on how long generating one took (both wall time);
# the others stand. A test's own @settings inherit this. HYPOTHESIS_PROFILE=default: Hypothesis's.
settings.register_profile(
    "suite", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "suite"))


def pytest_configure(config: pytest.Config) -> None:
    """Ctrl-C reaches the processes tests start, however the suite itself was started. A shell
    starts background jobs (`scripts/busy-suite &`, `nohup …&`, a CI runner's) with SIGINT
    ignored, and an ignored signal stays ignored across exec, so Python in a child would not
    turn SIGINT into KeyboardInterrupt and the tests of Ctrl-C would wait for nothing; a
    handler, unlike SIG_IGN, is reset to the default in an exec'd child."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """`-n auto`, as the README's command runs: two workers more than the cores this process
    may use. The tests spend much of their time waiting on the servers and the app they
    start: on 2 quiet cores, 1,871 tests took 217 s with 3 workers and 179 s with 4
    (docs/development.md, "Speed"). PYTEST_XDIST_AUTO_NUM_WORKERS, if set, is xdist's to
    read."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    return len(os.sched_getaffinity(0)) + 2


SECRETS = (ids.BOT_TOKEN, ids.APP_TOKEN, ids.SIGNING_SECRET, ids.OPENAI_API_KEY)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    """Fail any test whose captured output (its own, its logs, its subprocesses') shows a
    secret: settings and errors must never print one."""
    outcome = yield
    report = outcome.get_result()
    leaks = [
        name
        for name, text in report.sections
        if name.endswith(report.when)  # earlier phases' sections were checked in their phase
        for secret in SECRETS
        if secret in text
    ]
    if leaks and report.passed:
        report.outcome = "failed"
        report.longrepr = f"a secret value appeared in the captured output: {sorted(set(leaks))}"


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() not in ("", "0", "false")


# --- backends -------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def postgres_database() -> Iterator[Engine]:
    """A fresh database for this test session, dropped at its end; each test gets a schema."""
    server = database_url(os.environ.get("TEST_POSTGRES_URL", DEFAULT_POSTGRES))
    admin = create_engine(server, isolation_level="AUTOCOMMIT", connect_args={"connect_timeout": 5})
    unreachable = None
    try:
        with admin.connect():
            pass
    except OperationalError as exc:
        admin.dispose()
        where = server.render_as_string(hide_password=True)
        unreachable = f"PostgreSQL is unreachable at {where}: {exc.orig}"
    if unreachable and _in_ci():
        pytest.fail(f"{unreachable} (CI is set, so this fails instead of skipping)", pytrace=False)
    if unreachable:
        pytest.skip(unreachable)
    name = f"test_store_{uuid.uuid4().hex[:12]}"
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    database = create_engine(server.set(database=name), isolation_level="AUTOCOMMIT")
    try:
        yield database
    finally:
        database.dispose()
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path) -> str:
    """A URL of an empty database: a new SQLite file, or a new PostgreSQL schema."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'store.db'}"
    return request.getfixturevalue("postgres_url")


def new_postgres_schema(database: Engine) -> str:
    """A URL of a new, empty PostgreSQL schema of `database`."""
    schema = f"test_{uuid.uuid4().hex[:12]}"
    with database.connect() as connection:
        connection.execute(text(f'CREATE SCHEMA "{schema}"'))
    url = database.url.set(query={"options": f"-csearch_path={schema}"})
    return url.render_as_string(hide_password=False)


@pytest.fixture
def postgres_url(postgres_database: Engine) -> str:
    """A URL of a new, empty PostgreSQL schema (for tests that need several processes)."""
    return new_postgres_schema(postgres_database)


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    opened = open_store(store_url)
    yield opened
    opened.close()


# --- the app against the fakes ----------------------------------------------------------


@pytest.fixture
def slack():
    with FakeSlack() as fake:
        yield fake


@pytest.fixture
def model():
    with FakeOpenAI() as fake:
        # It counts the prompt's tokens as OpenAI does for the tests' model (a test playing
        # another server sets `chars_per_token`): its usage calibrates nothing unless asked to.
        fake.server.chars_per_token, fake.server.tokenizer = None, counter_for("gpt-4o-mini").count
        yield fake
    # Every request the app made must fit the openai package's own request types.
    assert fake.invalid_requests == [], fake.invalid_requests


# The store the end-to-end tests' apps use: SQLite files by default; with
# TEST_APP_BACKEND=postgresql, a new PostgreSQL schema each (CI runs the suite both ways).
APP_BACKEND = os.environ.get("TEST_APP_BACKEND", "sqlite")
assert APP_BACKEND in ("sqlite", "postgresql"), f"TEST_APP_BACKEND={APP_BACKEND!r}"


@pytest.fixture(scope="session")
def migrated_sqlite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty SQLite store at the schema's head, made once per test process. Each app's
    store starts as a copy of it, as a restarted app finds its store: running every migration
    again for each test's app cost most of its start. The migrations themselves are tested
    from empty (tests/context/)."""
    path = tmp_path_factory.mktemp("migrated") / "store.db"
    open_store(f"sqlite:///{path}").close()  # closed: its write-ahead log folded into the file
    return path


class AppStores:
    """The stores make_app's apps open, by the order they are started: `[0]` is the first
    app's (a test may fill it before the app starts, as a crashed process left it)."""

    def __init__(self, request: pytest.FixtureRequest, tmp_path: Path) -> None:
        self._request = request
        self._tmp_path = tmp_path
        self._urls: list[str] = []

    def __getitem__(self, n: int) -> str:
        while len(self._urls) <= n:
            if APP_BACKEND == "postgresql":
                database = self._request.getfixturevalue("postgres_database")
                self._urls.append(new_postgres_schema(database))
            else:
                path = self._tmp_path / f"app{len(self._urls)}.db"
                shutil.copyfile(self._request.getfixturevalue("migrated_sqlite"), path)
                self._urls.append(f"sqlite:///{path}")
        return self._urls[n]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the tests whose apps open TEST_APP_BACKEND's stores: the only ones a second pass
    on the other backend (`-m app_backend`) needs to run again."""
    for item in items:
        if "app_stores" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.app_backend)


@pytest.fixture
def app_stores(request: pytest.FixtureRequest, tmp_path: Path) -> AppStores:
    return AppStores(request, tmp_path)


@pytest.fixture
def make_app(request: pytest.FixtureRequest, app_stores: AppStores, slack, model):
    """Start the app with some settings changed; stopped at the end of the test. Under a
    test marked `listeners`, the Bolt tier's app (tests/bolt_tier.py), in any `role`."""
    started: list[RunningApp] = []
    kind = DispatchedApp if request.node.get_closest_marker("listeners") else RunningApp

    def start(role: Role = "serve", **settings: object) -> RunningApp:
        # A test about one backend's own behaviour (SQLite's locks) names its store.
        url = str(settings.pop("database_url", None) or app_stores[len(started)])
        clock = settings.pop("clock", None)  # the spend limits' time: the Bolt tier's only
        built = app_settings(slack, model, url, **settings)
        # The ingress and worker roles run nothing or serve nothing: the Bolt tier's only.
        assert role == "serve" or kind is DispatchedApp, "a role needs pytest.mark.listeners"
        assert clock is None or kind is DispatchedApp, "a clock needs pytest.mark.listeners"
        if clock is not None:
            app = DispatchedApp(built, role, clock)
        else:
            app = DispatchedApp(built, role) if role != "serve" else kind(built)
        started.append(app.start())
        return started[-1]

    yield start
    for running in started:
        running.stop()


@pytest.fixture
def app(make_app):
    return make_app()
