"""Tasks per second against the number of environments: Sync, Async and Ray vector envs.

For each count of environments (1, 2, 4, 8, 16 by default) the oracle plays `max(32, 4 x count)`
tasks on a SAME_STEP vector env of that many copies, built three ways: Gymnasium's
`SyncVectorEnv` (one process), `AsyncVectorEnv` (one subprocess per copy) and
`RayVectorEnv` (one Ray actor per copy, on a local one-node Ray). Building the envs is
not timed. The three are measured in turn (A B C A B C ...) and the median and best
tasks/s are printed side by side. Then Ray's added cost per step: milliseconds per step
of a statement that does next to nothing (`SELECT 1` on SQLite), Async against Ray.

Run: `python benchmarks/scale.py` (`--envs 1 4 --repeats 1` for a quick look;
`--env os` for LifelongOS-v0, which needs Docker and the OS image).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from functools import partial

import gymnasium as gym
import numpy as np
import ray
from gymnasium.vector import AutoresetMode, VectorEnv

import lifelong_gym  # noqa: F401 - registers the ids
from lifelong_gym.agents import OracleAgent
from lifelong_gym.distributed import RayVectorEnv
from lifelong_gym.envs.db.actions import operation_reply
from lifelong_gym.envs.db.tasks import load_db_tasks
from lifelong_gym.envs.os.tasks import load_os_tasks

ENVS = {
    "db": ("LifelongDB-v0", {}, {}, load_db_tasks),
    "os": ("LifelongOS-v0", {"pool_size": 1}, {"docker": 1}, load_os_tasks),
}
SAME_STEP = AutoresetMode.SAME_STEP


def build(kind: str, env_id: str, count: int, kwargs: dict, resources: dict) -> VectorEnv:
    """A SAME_STEP vector env of `count` copies: "sync", "async" or "ray"."""
    if kind == "ray":
        return RayVectorEnv(env_id, count, kwargs, resources, autoreset_mode=SAME_STEP)
    return gym.make_vec(env_id, count, kind, vector_kwargs={"autoreset_mode": SAME_STEP}, **kwargs)


def tasks_per_second(envs: VectorEnv, oracle: OracleAgent, tasks: int) -> float:
    """The oracle's tasks per second until `tasks` episodes ended."""
    start = time.perf_counter()
    envs.reset(seed=0)
    ended = 0
    while ended < tasks:
        actions = tuple(oracle.act(session) for session in envs.call("session"))
        _, _, terminated, truncated, _ = envs.step(actions)
        ended += int(np.sum(terminated | truncated))
    return ended / (time.perf_counter() - start)


def milliseconds_per_step(envs: VectorEnv, steps: int) -> float:
    """Wall milliseconds of one step of `SELECT 1` in every copy."""
    envs.reset(seed=0)
    actions = (operation_reply("SELECT 1;"),) * envs.num_envs
    envs.step(actions)  # warm
    start = time.perf_counter()
    for _ in range(steps):
        envs.step(actions)
    return 1000 * (time.perf_counter() - start) / steps


def interleaved(
    built: dict[str, VectorEnv], repeats: int, measure: Callable[[VectorEnv], float]
) -> dict[str, list[float]]:
    """`measure` of each vector env, `repeats` times, in turn (A B C A B C), then closed."""
    found: dict[str, list[float]] = {kind: [] for kind in built}
    for _ in range(repeats):
        for kind, envs in built.items():
            found[kind].append(measure(envs))
    for envs in built.values():
        envs.close()
    return found


def main() -> None:
    """Print tasks/s per vector env kind and count, then Ray's added cost per step."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", choices=sorted(ENVS), default="db")
    parser.add_argument("--envs", nargs="+", type=int, default=[1, 2, 4, 8, 16])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--steps", type=int, default=200, help="steps for the cost per step")
    args = parser.parse_args()
    env_id, kwargs, resources, load_tasks = ENVS[args.env]
    oracle = OracleAgent(load_tasks())
    slots = max(*args.envs, 4)  # this machine stands for a node with Docker, for the shell
    ray.init(
        num_cpus=slots, resources={"docker": slots}, include_dashboard=False, log_to_driver=False
    )
    kinds = ["sync", "async", "ray"]

    print(f"{env_id}: oracle tasks per second (median of {args.repeats}, best in brackets)")
    print(f"{'envs':>4} | " + " | ".join(f"{kind:^17}" for kind in kinds))
    for count in args.envs:
        built = {kind: build(kind, env_id, count, kwargs, resources) for kind in kinds}
        play = partial(tasks_per_second, oracle=oracle, tasks=max(32, 4 * count))
        rates = interleaved(built, args.repeats, play)
        cells = [f"{statistics.median(r):8.1f} ({max(r):6.1f})" for r in rates.values()]
        print(f"{count:>4} | " + " | ".join(cells), flush=True)

    if args.env == "db":
        print(f"\nms per step of SELECT 1 in every copy (median of {args.repeats}, best)")
        print(f"{'envs':>4} | {'async':^17} | {'ray':^17} | ray's added cost per step")
        for count in (1, 4):
            built = {
                k: build(k, env_id, count, {"max_turns": 10_000}, {}) for k in ("async", "ray")
            }
            cost = interleaved(
                built, args.repeats, partial(milliseconds_per_step, steps=args.steps)
            )
            cells = [f"{statistics.median(c):8.2f} ({min(c):6.2f})" for c in cost.values()]
            added = statistics.median(cost["ray"]) - statistics.median(cost["async"])
            print(f"{count:>4} | " + " | ".join(cells) + f" | {added:+.2f} ms", flush=True)
    ray.shutdown()


if __name__ == "__main__":
    main()
