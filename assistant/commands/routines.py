"""`assistant routines add|list|pause|resume|delete|run-now`: routines for operators
(docs/operations.md, "Routines"), in the store DATABASE_URL names. Exit status 0, or 2 with
one line."""

from __future__ import annotations

import argparse
import json
import re
from datetime import UTC, datetime

from assistant.commands import CliError
from assistant.commands.stored import existing_store
from context.render import printable
from context.storage import Routine
from context.storage.schedule import (
    Schedule,
    ScheduleError,
    as_moment,
    asked_prompt,
    asked_schedule,
    stored,
)
from context.storage.tables import moment

_TEAM = re.compile(r"[TE][A-Z0-9]{1,20}")
_CHANNEL = re.compile(r"[CGD][A-Z0-9]{1,20}")
_USER = re.compile(r"[UW][A-Z0-9]{1,20}")


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    routines = commands.add_parser(
        "routines",
        help="add, list, pause, resume, delete or run now the prompts answered on a schedule",
        description="Routines in the store (DATABASE_URL): a prompt the bot answers in a "
        "channel, in a new thread, on a cron schedule or once. Exit status 0, or 2 with one "
        "line.",
    )
    verbs = routines.add_subparsers(dest="verb", required=True, metavar="VERB")
    adding = verbs.add_parser("add", help="a new routine")
    adding.add_argument("team", metavar="TEAM", help="the workspace id (T…)")
    adding.add_argument("channel", metavar="CHANNEL", help="the channel id (C…)")
    adding.add_argument("--prompt", required=True, help="what the bot is asked each time")
    when = adding.add_mutually_exclusive_group(required=True)
    when.add_argument("--cron", metavar="EXPR", help='five cron fields, e.g. "0 9 * * 1-5"')
    when.add_argument("--at", metavar="ISO-8601", help="once, e.g. 2026-12-01T09:00+01:00")
    adding.add_argument("--tz", metavar="ZONE", help="the IANA zone of --cron (default UTC)")
    adding.add_argument(
        "--creator",
        metavar="USER",
        required=True,
        help="the person it runs as (U…): the channel's access rules apply to them",
    )
    adding.set_defaults(handler=run_add)

    listing = verbs.add_parser("list", help="one line per routine: its last and next run")
    listing.add_argument("team", metavar="TEAM", nargs="?", help="only this workspace's")
    listing.set_defaults(handler=run_list)

    for verb, text, handler in (
        ("pause", "stop running it until resumed", run_pause),
        ("resume", "run it again from its next tick", run_resume),
        ("delete", "forget it (the threads it started stay)", run_delete),
        ("run-now", "make it due now: the next tick runs it once", run_now),
    ):
        parser = verbs.add_parser(verb, help=text)
        parser.add_argument("id", metavar="ID", type=_routine_id, help="the routine's id (list)")
        parser.set_defaults(handler=handler)


def _routine_id(text: str) -> int:
    if not text.isdigit() or len(text) > 12:
        raise argparse.ArgumentTypeError(f"{text!r} is not a routine id (a number; see list)")
    return int(text)


def _checked(pattern: re.Pattern[str], text: str, what: str) -> str:
    if not pattern.fullmatch(text):
        raise CliError(f"{printable(text)!r} is not a {what}")
    return text


def run_add(args: argparse.Namespace) -> int:
    team = _checked(_TEAM, args.team, "workspace id (T…)")
    channel = _checked(_CHANNEL, args.channel, "channel id (C…)")
    creator = _checked(_USER, args.creator, "user id (U…)")
    try:
        prompt = asked_prompt(args.prompt, "--")
        schedule, first = asked_schedule(args.cron, args.tz, args.at, datetime.now(UTC), "--")
    except ScheduleError as exc:
        raise CliError(printable(str(exc))) from None
    with existing_store("routines add") as store:
        routine = store.add_routine(
            team,
            channel,
            prompt,
            creator,
            cron=schedule.cron,
            tz=schedule.tz,
            at=as_moment(schedule.at),
            next_due=moment(first),
        )
    print(printable(_line(routine)))
    return 0


def _schedule(routine: Routine) -> str:
    if routine.at is not None:
        return f"once {routine.at}"
    return f"cron {json.dumps(routine.cron)} {routine.tz}"


def _line(routine: Routine) -> str:
    if routine.paused:
        state = f"paused ({routine.paused_reason or 'by hand'})"
    else:
        state = f"next {routine.next_due or 'never (ran once)'}"
    if routine.last_run_at is None:
        last = "last never"
    else:
        thread = f" thread {routine.last_thread_ts}" if routine.last_thread_ts else ""
        last = f"last {routine.last_run_at} {routine.last_outcome}{thread}"
        if routine.failures:
            last += f" ({routine.failures} failed in a row)"
    prompt = json.dumps(routine.prompt[:60] + ("…" if len(routine.prompt) > 60 else ""),
                        ensure_ascii=False)  # fmt: skip
    return "\t".join(
        (
            str(routine.id),
            routine.team,
            routine.channel,
            _schedule(routine),
            state,
            last,
            f"by {routine.creator or 'an operator'}",
            prompt,
        )
    )


def run_list(args: argparse.Namespace) -> int:
    if args.team is not None:
        _checked(_TEAM, args.team, "workspace id (T…)")
    with existing_store("routines list") as store:
        for routine in store.routines(args.team):
            print(printable(_line(routine)))
    return 0


def _missing(routine_id: int) -> CliError:
    return CliError(f"no routine {routine_id} (see assistant routines list)")


def run_pause(args: argparse.Namespace) -> int:
    with existing_store("routines pause") as store:
        if not store.pause_routine(args.id, "paused from the command line"):
            raise _missing(args.id)
    return 0


def run_resume(args: argparse.Namespace) -> int:
    now = datetime.now(UTC)
    with existing_store("routines resume") as store:
        routine = store.routine(args.id)
        if routine is None:
            raise _missing(args.id)
        schedule: Schedule = stored(routine.cron, routine.tz, routine.at)
        # The ticks missed while paused are not run: the next one from now is.
        following = schedule.next_after(now)
        if following is None:
            raise CliError(f"routine {args.id} was once, at {routine.at}: that has passed")
        store.resume_routine(args.id, moment(following))
    return 0


def run_delete(args: argparse.Namespace) -> int:
    with existing_store("routines delete") as store:
        if not store.delete_routine(args.id):
            raise _missing(args.id)
    return 0


def run_now(args: argparse.Namespace) -> int:
    with existing_store("routines run-now") as store:
        routine = store.routine(args.id)
        if routine is None:
            raise _missing(args.id)
        if routine.paused:
            raise CliError(f"routine {args.id} is paused: resume it first")
        store.set_routine_due(args.id, moment(datetime.now(UTC)))
    return 0
