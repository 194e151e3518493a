"""A server that went away mid-run (restarted, killed): the next task's start waits for it.

The task in flight when it went ends `task_environment_error`; the tasks after it start
once it answers again, so a restart costs one task, not every task until it is back.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from lifelong_gym.errors import BackendError

RECONNECT_TIMEOUT = 30.0  # seconds a task's start waits for the server
PAUSE = 0.5

T = TypeVar("T")


def wait_for_server(attempt: Callable[[], T], timeout: float = RECONNECT_TIMEOUT) -> T:
    """What `attempt()` returns once it stops raising `BackendError`; tried every PAUSE
    seconds, and after `timeout` seconds its last error is raised."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return attempt()
        except BackendError:
            if time.monotonic() >= deadline:
                raise
        time.sleep(PAUSE)
