"""The one place where the suite's environment ids are registered with Gymnasium."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

import gymnasium as gym

from lifelong_gym.errors import EnvArgumentError
from lifelong_gym.tasks import absolute_source

# id -> (entry point, registered as nondeterministic). A live shell is nondeterministic.
_ENVIRONMENTS: dict[str, tuple[str, bool]] = {
    "LifelongDB-v0": ("lifelong_gym.envs.db.env:LifelongDBEnv", False),
    "LifelongOS-v0": ("lifelong_gym.envs.os.env:LifelongOSEnv", True),
    "LifelongKG-v0": ("lifelong_gym.envs.kg.env:LifelongKGEnv", False),
}

ENV_IDS: tuple[str, ...] = tuple(_ENVIRONMENTS)


def register_envs() -> None:
    """Register every id of the suite (idempotent)."""
    for env_id, (entry_point, nondeterministic) in _ENVIRONMENTS.items():
        if env_id not in gym.registry:
            gym.register(
                id=env_id,
                entry_point=entry_point,
                nondeterministic=nondeterministic,
                disable_env_checker=False,
            )


def checked_env_kwargs(env_id: str, env_kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """`env_kwargs` checked against the signature of `env_id`'s environment, so a bad id
    or argument is one `EnvArgumentError` naming it (before anything is built)."""
    from lifelong_gym.arguments import check_arguments
    from lifelong_gym.core import LifelongEnv

    kwargs = dict(env_kwargs)
    target = _env_creator(env_id)
    base = LifelongEnv if isinstance(target, type) and issubclass(target, LifelongEnv) else None
    check_arguments(target, kwargs, f"env {env_id}", also=base)
    return kwargs


def with_absolute_paths(env_id: str, env_kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """`env_kwargs` with every argument that takes a path and names an existing file or
    folder made absolute, so that a run stored with them reads the same files from any
    working folder (a shipped task set's name stays a name; an unknown id changes nothing)."""
    paths = path_arguments(env_id) if env_kwargs else frozenset()
    return {
        key: absolute_source(value) if key in paths else value for key, value in env_kwargs.items()
    }


def path_arguments(env_id: str) -> frozenset[str]:
    """The arguments of `env_id`'s environment that take a file or folder (none for an
    unknown id)."""
    from lifelong_gym.arguments import path_parameters

    try:
        return path_parameters(_env_creator(env_id))
    except EnvArgumentError:
        return frozenset()


def _env_creator(env_id: str) -> Any:
    """The class or function registered for `env_id`; an unknown id is one line."""
    register_envs()
    try:
        spec = gym.spec(env_id)
    except gym.error.Error:
        raise EnvArgumentError(f"env {env_id!r}: {unknown_id(env_id)}") from None
    entry = spec.entry_point
    return gym.envs.registration.load_env_creator(entry) if isinstance(entry, str) else entry


def unknown_id(env_id: str) -> str:
    """That `env_id` is no registered id, and the registered id nearest to it (Gymnasium
    suggests a name without its version, which is no id either)."""
    ids = {known.lower(): known for known in gym.registry}
    near = difflib.get_close_matches(env_id.lower(), ids, n=1, cutoff=0.6)
    hint = f"did you mean {ids[near[0]]!r}? " if near else ""
    return f"no such environment id; {hint}the suite's ids: {', '.join(ENV_IDS)}"


def make_env(env_id: str, env_kwargs: Mapping[str, Any]) -> gym.Env:
    """`gym.make(env_id, **env_kwargs)`, the arguments checked first (`checked_env_kwargs`)."""
    kwargs = checked_env_kwargs(env_id, env_kwargs)
    try:
        return gym.make(env_id, **kwargs)
    except TypeError as error:
        raise EnvArgumentError(f"env {env_id!r} does not take these env_args: {error}") from None
