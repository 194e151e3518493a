"""Whether a process that left resources behind (databases, containers) still runs."""

from __future__ import annotations

import os


def process_alive(pid: int) -> bool:
    """Whether process `pid` runs on this host (a process we may not signal counts as alive)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
