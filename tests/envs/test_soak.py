"""A short soak of each environment, by count: nothing grows once warm, nothing is left.

Each environment plays the oracle over a few tasks again and again (`benchmarks/soak.py`,
the same code as the long soaks of docs/security.md). The first half is the warm-up that
fills every cache; from the sample after half the tasks to the one at the end, the open
descriptors, threads and gc-tracked objects must not grow, and after `close()` nothing may
be left in this process, on the MySQL server or on the Docker engine. Both samples follow
the same task of the cycle, so a leak of even one object a task shows.
"""

from __future__ import annotations

import pytest

from benchmarks.soak import soak

# objects the collector may count more at the end than at half-way without a leak:
# measured 0 on every environment (the samples follow the same task); a leak of one object
# per task adds at least half the tasks
OBJECT_TOLERANCE = 10


def check_flat(env_id: str, env_kwargs: dict, tasks: int, cycle: int) -> None:
    assert tasks % (2 * cycle) == 0, "both samples must follow the same task of the cycle"
    result = soak(env_id, env_kwargs, tasks, tasks // 2, cycle=cycle)
    _, half, end = result.samples
    assert (half.tasks, end.tasks) == (tasks // 2, tasks)
    assert result.unsolved == 0
    assert end.fds <= half.fds, f"open descriptors grew: {half.fds} -> {end.fds}"
    assert end.threads <= half.threads and end.os_threads <= half.os_threads
    assert end.objects - half.objects <= OBJECT_TOLERANCE, (
        f"gc-tracked objects grew by {end.objects - half.objects} in {tasks // 2} tasks"
    )
    assert result.leftovers == []


def test_sqlite_stays_flat():
    check_flat("LifelongDB-v0", {}, 200, 20)


@pytest.mark.mysql
def test_mariadb_stays_flat_and_leaves_nothing(mysql_url):
    check_flat("LifelongDB-v0", {"backend": "mysql", "url": mysql_url}, 60, 10)


def test_kg_stays_flat():
    pytest.importorskip("pyoxigraph")
    check_flat("LifelongKG-v0", {}, 100, 10)


def test_os_stays_flat_and_leaves_no_container(os_image):
    check_flat("LifelongOS-v0", {"image": os_image, "pool_size": 1}, 30, 5)
