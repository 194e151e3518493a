"""SIGTERM as a request to stop a run gracefully.

Batch systems and container engines end a job with SIGTERM, then SIGKILL after a grace
period. Under `stop_on_sigterm`, the first SIGTERM asks the running `Runner` to start no
further task: the tasks in flight finish and are recorded, the metrics are written, and
the command exits (code 143); the same command resumes the run. A second SIGTERM
interrupts at once, as Ctrl-C does (the tasks in flight are run again on resume), and a
SIGKILL after the grace period loses at most those tasks too (docs/runner.md).
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

EXIT_CODE = 128 + signal.SIGTERM


class StopRequest:
    """Whether SIGTERM asked the command to stop, passed on to the runner it watches."""

    def __init__(self) -> None:
        self.requested = False
        self._runner: Any = None

    def watch(self, runner: Any) -> None:
        """Pass a request (made already, or to come) on to `runner`, a `Runner`."""
        self._runner = runner
        if self.requested:
            runner.request_stop()

    def _on_sigterm(self, signum: int, frame: Any) -> None:
        if self.requested:
            raise KeyboardInterrupt  # the second one: stop now
        self.requested = True
        if self._runner is not None:
            self._runner.request_stop()


@contextmanager
def stop_on_sigterm() -> Iterator[StopRequest]:
    """Within the block, SIGTERM is a `StopRequest` (the main thread's handler, restored after)."""
    stop = StopRequest()
    previous = signal.signal(signal.SIGTERM, stop._on_sigterm)
    try:
        yield stop
    finally:
        signal.signal(signal.SIGTERM, previous)
