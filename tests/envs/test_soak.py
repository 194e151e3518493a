"""A short soak of each environment, by count: nothing grows once warm, nothing is left.

Each environment plays the oracle over a few tasks again and again (`benchmarks/soak.py`,
the same code as the long soaks of docs/security.md). The first half is the warm-up that
fills every cache; from the sample after half the tasks to the one at the end, the open
descriptors, threads and gc-tracked objects must not grow, and after `close()` nothing may
be left in this process, on the MySQL server or on the Docker engine. Both samples follow
the same task of the cycle, so a leak of even one object a task shows.
"""

from __future__ import annotations

from collections.abc import Callable

import gymnasium as gym
import pytest

from benchmarks.soak import soak

# gc-tracked objects the end may hold beyond half-way without a leak. Objects of the
# project's own classes: none (measured 0 on every environment, the two samples following
# the same task). All objects: caches of the libraries below (weak references and tuples)
# swing by up to 160 between the two samples on SQLite (-159 and +88 measured), by 1 on
# MariaDB and the KG; a finished session kept per task adds about 16 objects a task.
OWN_OBJECT_TOLERANCE = 0
OBJECT_TOLERANCE = 500
# The OS pool makes and removes sandboxes beside the tasks; each sample waits until it is
# idle (`wait_idle`). Its executors start their threads only as jobs overlap (up to two
# removers), each then holding a connection to the engine of its own, so a later sample may
# hold one more thread and descriptor; a task that leaked its shells' sockets would add
# two descriptors a task, 20 here.
OS_FD_TOLERANCE = 2
OS_THREAD_TOLERANCE = 1


def check_flat(
    env_id: str,
    env_kwargs: dict,
    tasks: int,
    cycle: int,
    fds: int = 0,
    threads: int = 0,
    settle: Callable[[gym.Env], object] | None = None,
) -> None:
    """`tasks` oracle episodes over the first `cycle` tasks; from half-way to the end at most
    `fds` more open descriptors and `threads` more threads, no more objects, nothing left."""
    assert tasks % (2 * cycle) == 0, "both samples must follow the same task of the cycle"
    result = soak(env_id, env_kwargs, tasks, tasks // 2, cycle=cycle, settle=settle)
    _, half, end = result.samples
    assert (half.tasks, end.tasks) == (tasks // 2, tasks)
    assert result.unsolved == 0
    assert end.fds <= half.fds + fds, f"open descriptors grew: {half.fds} -> {end.fds}"
    assert end.threads <= half.threads + threads, f"threads: {half.threads} -> {end.threads}"
    assert end.os_threads <= half.os_threads + threads
    own = end.own_objects - half.own_objects
    assert own <= OWN_OBJECT_TOLERANCE, f"objects of lifelong_gym's classes grew by {own}"
    grown = end.objects - half.objects
    assert grown <= OBJECT_TOLERANCE, f"gc-tracked objects grew by {grown} in {tasks // 2} tasks"
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
    # and no socket: the pool's Docker client held its pooled connections past close()
    kwargs = {"image": os_image, "pool_size": 1}
    check_flat(
        "LifelongOS-v0", kwargs, 20, 5, OS_FD_TOLERANCE, OS_THREAD_TOLERANCE, settle=idle_pool
    )


def idle_pool(env: gym.Env) -> None:
    assert env.unwrapped.pool.wait_idle(), "the OS pool's background work did not end"
