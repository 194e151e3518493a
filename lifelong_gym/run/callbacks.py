"""Callbacks of a lifelong run: the seven events, the session control, and a registry.

A callback overrides the handlers of the events it cares about; every handler gets the
agent, the environment, the current session (None for `restore_state`), the history of
finished sessions and the session control, and may return a new control (or None to keep
the one it was given, which it may also change in place). Handlers of a list of callbacks
run in list order and know nothing of each other.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lifelong_gym.session import Session

if TYPE_CHECKING:
    import gymnasium as gym

    from lifelong_gym.agents import Agent

logger = logging.getLogger(__name__)

EVENTS: tuple[str, ...] = (
    "restore_state",
    "on_session_create",
    "on_environment_reset",
    "on_agent_inference",
    "on_environment_interact",
    "on_environment_complete",
    "on_state_save",
)


@dataclass
class SessionControl:
    """Flags with which callbacks steer the session in flight.

    A fresh control is made for every session (before `on_session_create`), so no flag
    leaks from one task to the next. The runner clears a flag when it acts on it:

    - `skip_next_inference`: the runner does not call the agent on the next turn and
      sends `reply` instead (a callback that sets it must set `reply` too). Cleared when
      the inference is skipped.
    - `skip_next_interaction`: the runner does not send the agent's reply to the
      environment and asks the agent again (e.g. after the callback told it, in the
      session's history, what was wrong with the reply). Cleared when the step is skipped.
    - `end_session`: the runner stops the session before the next inference; a task that
      is still running is scored as it stands (status `completed`).
    - `reply`: the reply the runner is about to send, set after each inference; a callback
      handling `on_agent_inference` may read or rewrite it.
    """

    skip_next_inference: bool = False
    skip_next_interaction: bool = False
    end_session: bool = False
    reply: str | None = None


class Callback:
    """Base of all callbacks: seven event handlers that do nothing by default.

    A stateful callback keeps its state in attributes listed in `state_attributes` (or
    overrides `state()` and `load_state()`); the runner saves `state()` with each snapshot
    and, on resume, calls `load_state()` before the `restore_state` event.
    """

    state_attributes: tuple[str, ...] = ()

    def setup(self, agent: Agent, env: gym.Env) -> None:  # noqa: B027 - optional hook
        """Before the first task of a run: check the agent and env fit, raising if not.

        Raise `CallbackSpecError` (with what to change) so the run stops before any task.
        """

    def restore_state(
        self,
        agent: Agent,
        env: gym.Env,
        session: None,
        history: Sequence[Session],
        control: SessionControl,
    ) -> SessionControl | None:
        """Once per run, after a resumed run has loaded this callback's saved state."""

    def on_session_create(
        self,
        agent: Agent,
        env: gym.Env,
        session: Session,
        history: Sequence[Session],
        control: SessionControl,
    ) -> SessionControl | None:
        """A session was made for the next task (index only; reset replaces it)."""

    def on_environment_reset(
        self,
        agent: Agent,
        env: gym.Env,
        session: Session,
        history: Sequence[Session],
        control: SessionControl,
    ) -> SessionControl | None:
        """The environment started the task; the session holds its opening prompt."""

    def on_agent_inference(
        self,
        agent: Agent,
        env: gym.Env,
        session: Session,
        history: Sequence[Session],
        control: SessionControl,
    ) -> SessionControl | None:
        """The agent replied; the reply is `control.reply`, not yet in the history."""

    def on_environment_interact(
        self,
        agent: Agent,
        env: gym.Env,
        session: Session,
        history: Sequence[Session],
        control: SessionControl,
    ) -> SessionControl | None:
        """The environment executed the reply; the observation is in the history."""

    def on_environment_complete(
        self,
        agent: Agent,
        env: gym.Env,
        session: Session,
        history: Sequence[Session],
        control: SessionControl,
    ) -> SessionControl | None:
        """The environment scored the finished task; status, outcome and reward are set."""

    def on_state_save(
        self,
        agent: Agent,
        env: gym.Env,
        session: Session,
        history: Sequence[Session],
        control: SessionControl,
    ) -> SessionControl | None:
        """The runner is about to write the finished session and the callbacks' state."""

    # -- state ----------------------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        """This callback's state as JSON-ready values (the attributes in `state_attributes`)."""
        return {name: getattr(self, name) for name in self.state_attributes}

    def load_state(self, state: dict[str, Any]) -> None:
        """Take back a state that `state()` returned."""
        for name in self.state_attributes:
            if name in state:
                setattr(self, name, state[name])

    @classmethod
    def from_state(cls, state: dict[str, Any], **kwargs: Any) -> Callback:
        """A new callback built with `kwargs` and holding a saved `state`."""
        callback = cls(**kwargs)
        callback.load_state(state)
        return callback


def state_keys(callbacks: Sequence[Callback]) -> list[str]:
    """The key of each callback's saved state: its class name, numbered when repeated."""
    keys, seen = [], {}
    for callback in callbacks:
        name = type(callback).__name__
        seen[name] = seen.get(name, 0) + 1
        keys.append(name if seen[name] == 1 else f"{name}#{seen[name]}")
    return keys


def fire(
    callbacks: Sequence[Callback],
    event: str,
    arguments: tuple[Agent, gym.Env, Session | None, Sequence[Session], SessionControl],
    errors: list[str],
) -> SessionControl:
    """Call one event's handler on every callback, in order, with (agent, env, session,
    history, control); a handler's new control replaces the old, a failure goes to `errors`."""
    agent, env, session, history, control = arguments
    for callback in callbacks:
        try:
            result = getattr(callback, event)(agent, env, session, history, control)
        except Exception as error:
            logger.exception("callback %s failed in %s", type(callback).__name__, event)
            errors.append(f"{type(callback).__name__}.{event}: {type(error).__name__}: {error}")
            continue
        if result is not None:
            control = result
    return control
