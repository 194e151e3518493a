"""`ActorEnv`: an environment in the driver whose real environment lives in an `EnvActor`.

The lifelong runner reads and changes the live state of its environment's `LifelongEnv`:
the task set, the running task, the session (callbacks add messages to it), `end_task`,
the parser callbacks use. `ActorEnv` is that `LifelongEnv` for the runner, its state
fetched through the actor's `call`: it keeps the session of the running task in the
driver as one object for the whole task; before each step the driver's session (with
what callbacks added) goes to the actor, and after it the actor's session comes back
into the same object. Ray runs the calls of one caller to one actor in order, so the
three calls of a step go out at once and cost one round trip.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import ray

from lifelong_gym.distributed.actor import start_env_actor
from lifelong_gym.errors import BackendError
from lifelong_gym.session import Session, SessionStatus


def connect(address: str) -> None:
    """Join the Ray cluster at `address` (`auto`: the one this machine belongs to; `local`:
    start one in this process), unless Ray is already initialised."""
    if ray.is_initialized():
        return
    try:
        ray.init(address=None if address == "local" else address, log_to_driver=False)
    except ConnectionError as error:
        raise BackendError(
            f"no Ray cluster at {address!r} ({error}); start one (`ray start --head`), "
            "pass its address (host:port or ray://host:10001), or --ray local for one here"
        ) from None


class ActorEnv(gym.Env):
    """The environment `gym.make(env_id, **env_kwargs)` built in a Ray actor, driven from here.

    `unwrapped` is this object: `tasks`, `spec` and the spaces are read once, `session` is
    the driver's copy, `end_task` runs remotely on it, and any other attribute or method
    of the remote `LifelongEnv` (`task`, `normalize_action`, `parse_action`, ...) is read
    or called through the actor. `close()` closes the environment and ends the actor.
    """

    def __init__(
        self,
        env_id: str,
        env_kwargs: dict[str, Any] | None = None,
        resources: dict[str, float] | None = None,
    ):
        self._actor = start_env_actor(env_id, env_kwargs, resources)
        call = self._actor.call.remote
        reads = [call("spec"), call("tasks"), call("observation_space"), call("action_space")]
        kind = call("__getattribute__", "__class__")
        try:
            self.spec, self.tasks, self.observation_space, self.action_space = ray.get(reads)
            self._kind = ray.get(kind)
        except Exception:
            ray.kill(self._actor)
            raise
        self.metadata = self._kind.metadata
        self.session: Session | None = None

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Start a task in the actor; `session` is the driver's copy of its new session."""
        started = self._actor.reset.remote(seed=seed, options=options)
        session = self._actor.call.remote("session")
        result, self.session = ray.get([started, session])
        return result

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Send the driver's session and the action; take the actor's session back."""
        push = self._actor.call.remote("__setattr__", "session", self.session)
        stepped = self._actor.step.remote(action)
        pull = self._actor.call.remote("session")
        _pushed, result, session = ray.get([push, stepped, pull])
        self._take(session)
        return result

    def end_task(self, status: SessionStatus, error: str = "") -> Session:
        """Stop the running task with `status` in the actor and score it as it stands."""
        push = self._actor.call.remote("__setattr__", "session", self.session)
        ended = self._actor.call.remote("end_task", status, error)
        _pushed, session = ray.get([push, ended])
        return self._take(session)

    def close(self) -> None:
        """Close the remote environment (its containers, databases) and end the actor."""
        if self._actor is None:
            return
        actor, self._actor = self._actor, None
        try:
            ray.get(actor.close.remote())
        finally:
            ray.kill(actor)
        super().close()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if callable(getattr(self._kind, name, None)):
            return lambda *args, **kwargs: ray.get(self._actor.call.remote(name, *args, **kwargs))
        return ray.get(self._actor.call.remote(name))

    def _take(self, session: Session) -> Session:
        """Copy the actor's session into the driver's (the object the runner holds)."""
        if self.session is None:
            self.session = session
        else:
            for name in type(session).model_fields:
                setattr(self.session, name, getattr(session, name))
        return self.session
