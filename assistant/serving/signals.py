"""How `run` and `worker` stop: process managers (Procfile platforms, systemd, Docker) send
SIGTERM, a person Ctrl-C; either ends the same way, status 0, within a bound."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Iterator

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


@contextlib.contextmanager
def stopped_by_signals() -> Iterator[asyncio.Event]:
    """While inside, the first SIGTERM or SIGINT sets the event it gives and cancels the
    current task; a second signal changes nothing (the stop is already bounded), nor does
    one after the block sets the event itself. The cancellation a signal caused ends here:
    the block's own clean-up has run, and the process ends as asked (status 0)."""
    task = asyncio.current_task()
    assert task is not None
    stopping = asyncio.Event()
    signalled = False

    def stop() -> None:
        nonlocal signalled
        if not stopping.is_set():
            stopping.set()
            signalled = True
            task.cancel()

    loop = asyncio.get_running_loop()
    for sig in STOP_SIGNALS:
        with contextlib.suppress(NotImplementedError, RuntimeError):  # Windows, not main thread
            loop.add_signal_handler(sig, stop)
    try:
        yield stopping
    except asyncio.CancelledError:
        if not signalled:
            raise
        task.uncancel()
    finally:
        for sig in STOP_SIGNALS:
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(sig)
