"""Callbacks of a lifelong run: the events, the run state, the session control, and how
the runner calls a callback's handlers.

A callback overrides the handlers of the events it cares about, in the shape of
transformers' `TrainerCallback`. Every handler is called one way:
`handler(run, state, control, **keywords)`, where `run` is the `Runner` driving the stream
(its `settings`, `env`, `agent`, `history`, `probes`, `output_dir`), `state` the public
`RunState` (what the run has done so far), `control` the `SessionControl` of the session in
flight, and the keywords are the fixed ones of the event (`EVENT_KEYWORDS`). A handler
names the keywords it needs and takes `**kwargs` for the rest, so that an event can pass a
new one without breaking it; `check_handlers` refuses, when a callback joins a run, a
handler that cannot be called so. A handler may return a new control (or None to keep the
one it was given, which it may also change in place). Handlers of a list of callbacks run
in list order and know nothing of each other.

The seven session events (`EVENTS`) are the appendix's; the three run events
(`RUN_EVENTS`) are where the runner's own services work (`default_callbacks.py`): they
get a fresh control that the runner does not read, and what they raise stops the run.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lifelong_gym.errors import CallbackSpecError
from lifelong_gym.run.callback_errors import callback_name

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
RUN_EVENTS: tuple[str, ...] = ("on_run_begin", "on_session_recorded", "on_run_end")

_SESSION_KEYWORDS = ("agent", "env", "session", "history")
EVENT_KEYWORDS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(EVENTS, _SESSION_KEYWORDS),
    "on_run_begin": ("agent", "env", "history"),
    "on_session_recorded": _SESSION_KEYWORDS,
    "on_run_end": ("agent", "env", "history", "metrics"),
}


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


@dataclass
class RunState:
    """What the run has done so far, public to callbacks (as `TrainerState` is to a
    trainer's). The runner keeps it current; a callback reads it and never writes it.

    - `tasks_total`: tasks in the stream (after `max_tasks`).
    - `tasks_done`: finished sessions of the stream, resumed ones included.
    - `correct`: how many of them were solved.
    - `errored`: how many of them an error ended (`lifelong_gym.session.ERROR_STATUSES`):
      not judged, so success is `correct / (tasks_done - errored)`.
    - `consecutive_failures`: the sessions in a row at the end of the stream so far that
      ended in a status of `lifelong_gym.session.SETUP_FAILURE_STATUSES`.
    - `current_task`: the task index of the session whose event fires (None for
      `restore_state` and `on_run_begin`; the recorded one's for `on_session_recorded`);
      with tasks in flight (`concurrency`), the one of this event.
    - `probing`: the event belongs to a probe episode (docs/metrics.md), not the stream.
    - `probe_results`: the probe records so far (`ProbeRecord`: point, task, skills,
      status, reward), in the order of `probes.jsonl`; empty in a run without probes.
    """

    tasks_total: int = 0
    tasks_done: int = 0
    correct: int = 0
    consecutive_failures: int = 0
    errored: int = 0
    current_task: int | None = None
    probing: bool = False
    probe_results: Sequence[Any] = field(default_factory=list)


class Callback:
    """Base of all callbacks: a handler per event (`EVENTS`, `RUN_EVENTS`) that does nothing.

    A stateful callback keeps its state in attributes listed in `state_attributes` (or
    overrides `state()` and `load_state()`); the runner saves `state()` with each snapshot
    and, on resume, calls `load_state()` before the `restore_state` event.
    """

    state_attributes: tuple[str, ...] = ()

    def setup(self, agent: Agent, env: gym.Env) -> None:  # noqa: B027 - optional hook
        """Before the first task of a run: check the agent and env fit, raising if not.

        Raise `CallbackSpecError` (with what to change) so the run stops before any task.
        """

    def needs(self) -> dict[str, str]:
        """The registered callbacks this one needs in the same run, each with why (checked
        with `registry.check_needs` before `setup`): none unless a subclass says."""
        return {}

    def restore_state(
        self, run: Any, state: RunState, control: SessionControl, **kwargs: Any
    ) -> SessionControl | None:
        """Once per run, after a resumed run has loaded this callback's saved state
        (`session` is None)."""

    def on_session_create(
        self, run: Any, state: RunState, control: SessionControl, **kwargs: Any
    ) -> SessionControl | None:
        """A session was made for the next task (index only; reset replaces it)."""

    def on_environment_reset(
        self, run: Any, state: RunState, control: SessionControl, **kwargs: Any
    ) -> SessionControl | None:
        """The environment started the task; the session holds its opening prompt."""

    def on_agent_inference(
        self, run: Any, state: RunState, control: SessionControl, **kwargs: Any
    ) -> SessionControl | None:
        """The agent replied; the reply is `control.reply`, not yet in the history."""

    def on_environment_interact(
        self, run: Any, state: RunState, control: SessionControl, **kwargs: Any
    ) -> SessionControl | None:
        """The environment executed the reply; the observation is in the history."""

    def on_environment_complete(
        self, run: Any, state: RunState, control: SessionControl, **kwargs: Any
    ) -> SessionControl | None:
        """The environment scored the finished task; status, outcome and reward are set."""

    def on_state_save(
        self, run: Any, state: RunState, control: SessionControl, **kwargs: Any
    ) -> SessionControl | None:
        """The runner is about to write the finished session and the callbacks' state."""

    # -- the run's events: the runner's services (default_callbacks.py) work here ------

    def on_run_begin(
        self, run: Any, state: RunState, control: SessionControl, **kwargs: Any
    ) -> SessionControl | None:
        """The run folder is open (a resumed run restored) and the stream about to start."""

    def on_session_recorded(
        self, run: Any, state: RunState, control: SessionControl, **kwargs: Any
    ) -> SessionControl | None:
        """The finished `session` is in the history and the run folder; `state` counts it.
        Raise `RunAbortedError` (one line) to stop the run there."""

    def on_run_end(
        self, run: Any, state: RunState, control: SessionControl, **kwargs: Any
    ) -> SessionControl | None:
        """The stream is done (or stopped) and `metrics.json` written; `metrics` are the
        run's."""

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


def check_handlers(callback: Callback) -> None:
    """Refuse, in one line, a callback whose handler cannot be called as the runner calls
    it: `(run, state, control, **keywords)` with the event's keywords."""
    for event, keywords in EVENT_KEYWORDS.items():
        signature = inspect.signature(getattr(callback, event))
        try:
            signature.bind(None, None, None, **dict.fromkeys(keywords))
        except TypeError:
            passed = ", ".join(f"{keyword}=" for keyword in keywords)
            raise CallbackSpecError(
                f"callback {callback_name(type(callback))}: {event}{signature} cannot be "
                f"called as (run, state, control, {passed}): write it as "
                f"{event}(self, run, state, control, **kwargs) (docs/runner.md, Callbacks)"
            ) from None


def fire(
    callbacks: Sequence[Callback],
    event: str,
    run: Any,
    state: RunState,
    control: SessionControl,
    errors: list[str],
    **kwargs: Any,
) -> SessionControl:
    """Call one session event's handler on every callback, in order, with (run, state,
    control, **kwargs); a handler's new control replaces the old, a failure goes to
    `errors`, which end the session as `task_unknown_error` (and its traceback to the run's
    `log_traceback`, the log without a runner)."""
    for callback in callbacks:
        try:
            result = getattr(callback, event)(run, state, control, **kwargs)
        except Exception as error:
            errors.append(f"{type(callback).__name__}.{event}: {type(error).__name__}: {error}")
            title = f"callback {type(callback).__name__}: {event} raised"
            log_traceback = getattr(run, "log_traceback", None)  # a runner's: its run.log
            if log_traceback is None:
                logger.exception(title)
            else:
                log_traceback(title)
            continue
        if result is not None:
            control = result
    return control
