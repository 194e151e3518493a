"""`RayVectorEnv`: a Gymnasium vector env whose sub-environments are Ray actors.

Every sub-environment is an `EnvActor` built from the same id and keyword arguments, placed
by Ray resources and spread across the nodes that offer them. A step sends every action at
once and waits for the replies within the step time limit.

Faults: when a sub-environment's actor dies (its node went down, its process was killed)
or does not answer within `step_timeout`, its step returns `truncated=True` with
`info["env_error"]` saying what happened; its actor is replaced by a fresh one (on another
node if that one is gone), which autoresets as the vector env's mode says. The other
sub-environments go on. The task that was in flight is not played again.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from copy import deepcopy
from typing import Any

import gymnasium as gym
import numpy as np
import ray
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space, concatenate, create_empty_array, iterate
from ray.exceptions import RayActorError, RayError, RayTaskError

from lifelong_gym.distributed.actor import Placement, start_env_actor
from lifelong_gym.errors import BackendError, ConfigError

DEFAULT_STEP_TIMEOUT = 300.0
DEFAULT_START_TIMEOUT = 600.0


class EnvFault(str):
    """Why a sub-environment's call has no result (its actor died, or did not answer)."""


class RayVectorEnv(VectorEnv):
    """`num_envs` copies of `env_id`, each in its own Ray actor.

    - `env_kwargs`: passed to `gym.make(env_id, **env_kwargs)` in each actor.
    - `resources`: the custom Ray resources each actor needs, e.g. `{"docker": 1}` for
      LifelongOS-v0 on the nodes that run a Docker engine; `num_cpus` per actor (default 1).
    - `step_timeout`: seconds a step or reset of one sub-environment may take before it
      counts as a fault; `start_timeout`: seconds to wait for an actor to be placed and built.
    - `autoreset_mode`: `NEXT_STEP` (Gymnasium's default), `SAME_STEP` or `DISABLED`, with
      Gymnasium's meaning (`metadata["autoreset_mode"]`).
    - `scheduling_strategy`: where actors go (default "SPREAD" across qualifying nodes).

    Ray must be initialised (`ray.init(address=...)`) or it is started on this machine.
    `placements[i]` tells on which node and in which process sub-environment `i` runs.
    """

    def __init__(
        self,
        env_id: str,
        num_envs: int,
        env_kwargs: dict[str, Any] | None = None,
        resources: dict[str, float] | None = None,
        *,
        num_cpus: float = 1,
        step_timeout: float = DEFAULT_STEP_TIMEOUT,
        start_timeout: float = DEFAULT_START_TIMEOUT,
        autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
        scheduling_strategy: Any = "SPREAD",
        copy: bool = True,
    ):
        if num_envs < 1:
            raise ConfigError(f"num_envs must be at least 1, got {num_envs}")
        if step_timeout <= 0 or start_timeout <= 0:
            raise ConfigError("step_timeout and start_timeout must be positive seconds")
        self.autoreset_mode = AutoresetMode(autoreset_mode)
        self.num_envs = num_envs
        self.step_timeout = step_timeout
        self.start_timeout = start_timeout
        self.copy = copy
        self._actor_options = {
            "env_id": env_id,
            "env_kwargs": dict(env_kwargs or {}),
            "resources": dict(resources or {}),
            "num_cpus": num_cpus,
            "scheduling_strategy": scheduling_strategy,
        }
        if not ray.is_initialized():
            ray.init()
        self.actors: list[Any] = [None] * num_envs
        self.placements: list[Placement | None] = [None] * num_envs
        self._start(range(num_envs))

        first = self.actors[0]
        spaces = ray.get([first.call.remote(n) for n in ("observation_space", "action_space")])
        self.single_observation_space, self.single_action_space = spaces
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        env_metadata = ray.get(first.call.remote("metadata"))
        self.metadata = {**env_metadata, "autoreset_mode": self.autoreset_mode}
        self.render_mode = ray.get(first.call.remote("render_mode"))
        self.spec = gym.spec(env_id) if env_id in gym.registry else None

        self._observations = create_empty_array(self.single_observation_space, num_envs)
        self._env_obs: list[Any] = [None] * num_envs
        self._rewards = np.zeros(num_envs, dtype=np.float64)
        self._terminations = np.zeros(num_envs, dtype=np.bool_)
        self._truncations = np.zeros(num_envs, dtype=np.bool_)
        self._autoreset_envs = np.zeros(num_envs, dtype=np.bool_)

    # -- the vector env API ------------------------------------------------------------

    def reset(
        self,
        *,
        seed: int | Sequence[int | None] | None = None,
        options: dict[str, Any] | Sequence[dict[str, Any] | None] | None = None,
    ) -> tuple[Any, dict[str, Any]]:
        """Reset every sub-environment, or those of `options["reset_mask"]`.

        `seed`: one int (sub-environment `i` gets `seed + i`) or one seed per
        sub-environment. `options`: one dict for all (Gymnasium's way, with an optional
        boolean `reset_mask`), or a sequence of one dict (or None) per sub-environment.
        """
        seeds = self._seeds(seed)
        per_env, mask = self._options(options)
        self._terminations[mask] = False
        self._truncations[mask] = False
        self._autoreset_envs[mask] = False
        indices = [i for i in range(self.num_envs) if mask[i]]
        results = self._reset_all({i: (seeds[i], per_env[i]) for i in indices})
        infos: dict[str, Any] = {}
        for i in indices:
            self._env_obs[i], info = results[i]
            infos = self._add_info(infos, info, i)
        self._observations = concatenate(
            self.single_observation_space, self._env_obs, self._observations
        )
        return (deepcopy(self._observations) if self.copy else self._observations), infos

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict]:
        """Step every sub-environment at once (resetting those that autoreset now)."""
        actions = list(iterate(self.action_space, actions))
        next_step = self.autoreset_mode == AutoresetMode.NEXT_STEP
        resetting = [i for i in range(self.num_envs) if next_step and self._autoreset_envs[i]]
        if self.autoreset_mode == AutoresetMode.DISABLED and self._autoreset_envs.any():
            ended = np.flatnonzero(self._autoreset_envs).tolist()
            raise gym.error.ResetNeeded(
                f"sub-environments {ended} ended: reset them (options={{'reset_mask': ...}})"
            )
        stepping = [i for i in range(self.num_envs) if i not in resetting]
        calls = {i: self.actors[i].step.remote(actions[i]) for i in stepping}
        calls.update({i: self.actors[i].reset.remote() for i in resetting})
        results = self._gather(calls)
        faulty = [i for i, result in results.items() if isinstance(result, EnvFault)]
        if faulty:
            self._start(faulty)
        retry = self._reset_all({i: (None, None) for i in resetting if i in faulty})

        env_infos: dict[int, dict[str, Any]] = {}
        for i in range(self.num_envs):
            result = retry.get(i, results[i])
            if i in resetting:
                self._env_obs[i], env_infos[i] = result
                self._rewards[i], self._terminations[i], self._truncations[i] = 0.0, False, False
            elif isinstance(result, EnvFault):
                env_infos[i] = {"env_error": str(result)}
                self._env_obs[i] = ""
                self._rewards[i], self._terminations[i], self._truncations[i] = 0.0, False, True
            else:
                (self._env_obs[i], self._rewards[i], self._terminations[i],
                 self._truncations[i], env_infos[i]) = result  # fmt: skip
        restarts: dict[int, Any] = {}
        if self.autoreset_mode == AutoresetMode.SAME_STEP:
            ended = [i for i in stepping if self._terminations[i] or self._truncations[i]]
            restarts = self._reset_all({i: (None, None) for i in ended})
        infos: dict[str, Any] = {}
        for i in range(self.num_envs):
            info = env_infos[i]
            if i in restarts:  # SAME_STEP: the ended episode's last step goes into final_*
                final = {"final_obs": self._env_obs[i], "final_info": info}
                infos = self._add_info(infos, final, i)
                self._env_obs[i], restart_info = restarts[i]
                if "env_error" in info:  # a fault is told in the top-level info too
                    restart_info = {**restart_info, "env_error": info["env_error"]}
                info = restart_info
            infos = self._add_info(infos, info, i)

        self._observations = concatenate(
            self.single_observation_space, self._env_obs, self._observations
        )
        self._autoreset_envs = np.logical_or(self._terminations, self._truncations)
        return (
            deepcopy(self._observations) if self.copy else self._observations,
            np.copy(self._rewards),
            np.copy(self._terminations),
            np.copy(self._truncations),
            infos,
        )

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Call (or read) `name` on every sub-environment's `env.unwrapped`; one result each."""
        calls = [actor.call.remote(name, *args, **kwargs) for actor in self.actors]
        return tuple(ray.get(calls, timeout=self.step_timeout))

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """The attribute `name` of every sub-environment's `env.unwrapped`."""
        return self.call(name)

    def close_extras(self, **kwargs: Any) -> None:
        """Close every environment (freeing its containers and databases), then end its actor."""
        actors = [actor for actor in self.actors if actor is not None]
        closing = [actor.close.remote() for actor in actors]
        ray.wait(closing, num_returns=len(closing), timeout=self.step_timeout)
        for ref in closing:
            try:
                ray.get(ref, timeout=0)
            except RayError:  # dead or stuck: its node's next sweep removes what it held
                pass
        for actor in actors:
            ray.kill(actor, no_restart=True)
        self.actors = [None] * self.num_envs

    # -- faults, restarts, resets ------------------------------------------------------

    def _start(self, indices: Sequence[int]) -> None:
        """Start fresh actors for `indices` (ending the old ones) and wait until they are built.

        An actor that dies while starting (placed on a node that was going down) is placed
        again, until `start_timeout`; one whose environment cannot be built is an error.
        """
        options = self._actor_options
        deadline = time.monotonic() + self.start_timeout
        pending = list(indices)
        while pending:
            for i in pending:
                if self.actors[i] is not None:
                    ray.kill(self.actors[i], no_restart=True)
                self.actors[i] = start_env_actor(**options)
            ready = {i: self.actors[i].placement.remote() for i in pending}
            remaining = max(0.0, deadline - time.monotonic())
            _, late = ray.wait(list(ready.values()), num_returns=len(ready), timeout=remaining)
            if late:
                raise BackendError(
                    f"no Ray node could host {options['env_id']} within {self.start_timeout:g} s;"
                    f" each actor needs num_cpus={options['num_cpus']} and resources="
                    f"{options['resources']}: add a node that offers them"
                )
            pending = []
            for i, ref in ready.items():
                try:
                    self.placements[i] = ray.get(ref)
                except RayActorError as error:
                    if error.actor_init_failed:
                        raise BackendError(
                            f"{options['env_id']} cannot be built in a Ray actor: "
                            + _last_line(error.error_msg)
                        ) from None
                    pending.append(i)

    def _gather(self, calls: dict[int, Any]) -> dict[int, Any]:
        """Each call's result, or an `EnvFault` for the actors that died or did not answer."""
        refs = list(calls.values())
        _, pending = ray.wait(refs, num_returns=len(refs), timeout=self.step_timeout)
        late = set(pending)
        results: dict[int, Any] = {}
        for i, ref in calls.items():
            if ref in late:
                results[i] = EnvFault(
                    f"no reply within the step time limit ({self.step_timeout:g} s)"
                )
                continue
            try:
                results[i] = ray.get(ref)
            except RayTaskError:
                raise  # the environment itself raised: as in Gymnasium's own vector envs
            except RayError as error:
                results[i] = EnvFault(f"its Ray actor was lost: {_gist(error)}")
        return results

    def _reset_all(self, resets: dict[int, tuple[Any, Any]]) -> dict[int, Any]:
        """Reset these sub-environments at once; one whose actor fails is replaced, reset again."""
        calls = {i: self.actors[i].reset.remote(seed, opts) for i, (seed, opts) in resets.items()}
        results = self._gather(calls)
        faulty = [i for i, result in results.items() if isinstance(result, EnvFault)]
        if not faulty:
            return results
        self._start(faulty)
        again = self._gather({i: self.actors[i].reset.remote(*resets[i]) for i in faulty})
        for i in faulty:
            if isinstance(again[i], EnvFault):
                raise BackendError(f"sub-environment {i} cannot be reset: {again[i]}")
            observation, info = again[i]
            results[i] = observation, {**info, "env_error": str(results[i])}
        return results

    def _seeds(self, seed: int | Sequence[int | None] | None) -> list[int | None]:
        if seed is None:
            return [None] * self.num_envs
        if isinstance(seed, int):
            return [seed + i for i in range(self.num_envs)]
        if len(seed) != self.num_envs:
            raise ConfigError(
                f"give one seed per sub-environment ({self.num_envs}), got {len(seed)}"
            )
        return list(seed)

    def _options(self, options: Any) -> tuple[list[dict[str, Any] | None], np.ndarray]:
        mask = np.ones(self.num_envs, dtype=np.bool_)
        if options is None or isinstance(options, dict):
            options = dict(options or {})
            if "reset_mask" in options:
                mask = np.asarray(options.pop("reset_mask"), dtype=np.bool_)
                if mask.shape != (self.num_envs,):
                    raise ConfigError(f"reset_mask must hold {self.num_envs} booleans")
            return [options or None] * self.num_envs, mask
        if len(options) != self.num_envs:
            raise ConfigError(
                f"give one options dict per sub-environment ({self.num_envs}), got {len(options)}"
            )
        return list(options), mask


def _gist(error: RayError) -> str:
    """A Ray error's type and the line that says why (the rest is cluster-side detail)."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    why = next((line for line in lines if "because" in line), lines[0] if lines else "")
    return f"{type(error).__name__}: {why}"


def _last_line(text: str) -> str:
    """The last line of a traceback: the error and its message."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else text
