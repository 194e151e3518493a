"""An environment that lives in a Ray actor, built where the actor runs.

The actor receives an environment id and keyword arguments (plain, picklable values) and
calls `gym.make` on its own node: a live environment never crosses the wire. Building it
is also what sweeps that node's leftovers of dead runs: a MySQL back-end drops the
databases and accounts of processes that are gone, an OS container pool removes the
containers whose owner process is gone (both by their labels and owner pids).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import ray


@dataclass(frozen=True)
class Placement:
    """Where an actor's environment runs: the Ray node and the worker process."""

    node_id: str
    pid: int


class EnvServer:
    """One environment, served through Ray method calls (`EnvActor` is its actor class)."""

    def __init__(self, env_id: str, env_kwargs: dict[str, Any] | None = None):
        import lifelong_gym  # noqa: F401 - registers the suite's ids in this process

        self.env = gym.make(env_id, **(env_kwargs or {}))

    def placement(self) -> Placement:
        """The node and process this environment runs in (also: the actor is up)."""
        return Placement(ray.get_runtime_context().get_node_id(), os.getpid())

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """`env.reset(seed=seed, options=options)`."""
        return self.env.reset(seed=seed, options=options)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """`env.step(action)`."""
        return self.env.step(action)

    def call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """Call the method `name` of `env.unwrapped` with the arguments, or read the attribute."""
        attribute = getattr(self.env.unwrapped, name)
        return attribute(*args, **kwargs) if callable(attribute) else attribute

    def close(self) -> None:
        """Close the environment: its containers, databases and connections go with it."""
        self.env.close()


# Restarts are the vector env's job (a fresh actor, reset, and the fault reported), not Ray's:
# a silently restarted actor would hold a fresh environment in the middle of an episode.
EnvActor = ray.remote(max_restarts=0, max_task_retries=0)(EnvServer)


def start_env_actor(
    env_id: str,
    env_kwargs: dict[str, Any] | None = None,
    resources: dict[str, float] | None = None,
    *,
    num_cpus: float = 1,
    scheduling_strategy: Any = "SPREAD",
) -> Any:
    """Start an `EnvActor` on a node that offers `resources` (e.g. `{"docker": 1}`).

    Actors are spread across the nodes that qualify (`scheduling_strategy="SPREAD"`; a
    placement group's strategy can be given instead). Returns the actor's handle at once;
    `handle.placement.remote()` resolves when its environment is built.
    """
    return EnvActor.options(
        num_cpus=num_cpus,
        resources=dict(resources or {}),
        scheduling_strategy=scheduling_strategy,
    ).remote(env_id, dict(env_kwargs or {}))
