"""The runner: drives an agent through a lifelong environment's task stream, with callbacks.

The appendix's controller in the shape of `transformers.Trainer`: it makes a session per
task, lets the agent and the environment take turns, fires the seven callback events,
keeps the history of finished sessions, and snapshots every finished session so that
running the same command again resumes the run.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
from pydantic import BaseModel
from tqdm.auto import tqdm

from lifelong_gym.agents import Agent, AgentError
from lifelong_gym.errors import RunAbortedError
from lifelong_gym.metrics import DEFAULT_WINDOW, LifelongMetrics, compute_metrics
from lifelong_gym.run.callbacks import Callback, SessionControl, state_keys
from lifelong_gym.run.folder import (
    CONFIG_FILE,
    METRICS_FILE,
    REPAIR,
    RunDirectory,
    RunDirectoryError,
)
from lifelong_gym.run.report import format_report, write_plots
from lifelong_gym.session import EvaluationOutcome, Session, SessionStatus
from lifelong_gym.tasks import task_order

logger = logging.getLogger(__name__)

FAILURE_STATUSES = frozenset(
    {
        SessionStatus.TASK_ENVIRONMENT_ERROR,
        SessionStatus.TASK_UNKNOWN_ERROR,
        SessionStatus.AGENT_CONTEXT_LIMIT,
        SessionStatus.AGENT_OUT_OF_MEMORY,
        SessionStatus.AGENT_UNKNOWN_ERROR,
    }
)


# the password of a URL such as mysql://user:password@host
_URL_PASSWORD = re.compile(r"(://[^:/@\s\"]+):[^@/\s\"]+@")


class Runner:
    """Runs an agent through the task stream of a lifelong environment.

    Args:
        env: an environment whose `unwrapped` is a `LifelongEnv` (wrappers are fine).
        agent: the agent that writes the replies.
        callbacks: observers of the seven events, run in list order.
        output_dir: where snapshots, metrics and plots go (a path, or a `RunDirectory`
            already opened and locked, which the run then closes); None keeps it in memory.
        max_tasks: run at most this many tasks of the stream (None: all of it).
        order: "sample" (the task set's order) or "shuffled" (a permutation by `seed`).
        seed: seed of the shuffled order.
        max_consecutive_failures: stop after this many sessions in a row end in an error
            status (environment, agent or callback errors); None never stops.
        max_skipped_interactions: a session in which callbacks skip this many interactions
            in a row ends as `task_unknown_error` (a guard against endless re-asking).
        config: the user's settings, saved with the run and compared on resume.
        restart: start over in `output_dir`, deleting a previous run's record.
        progress: show a progress bar and print the report at the end.
        plots: write the learning-curve and per-skill PNGs at the end.
        metrics_every: also write `metrics.json` after every this many sessions.
    """

    def __init__(
        self,
        env: gym.Env,
        agent: Agent,
        callbacks: Sequence[Callback] = (),
        output_dir: str | Path | RunDirectory | None = None,
        max_tasks: int | None = None,
        *,
        order: str = "sample",
        seed: int | None = None,
        max_consecutive_failures: int | None = 10,
        max_skipped_interactions: int = 10,
        config: BaseModel | dict[str, Any] | None = None,
        restart: bool = False,
        progress: bool = True,
        plots: bool = True,
        window: int = DEFAULT_WINDOW,
        metrics_every: int = 500,
    ):
        self.env = env
        self.agent = agent
        self.callbacks = list(callbacks)
        self._folder = output_dir if isinstance(output_dir, RunDirectory) else None
        self.output_dir = (
            self._folder.path if self._folder else Path(output_dir) if output_dir else None
        )
        self.max_tasks = max_tasks
        self.order = task_order(env.unwrapped.tasks, order, seed)
        self.order_name, self.seed = order, seed
        self.max_consecutive_failures = max_consecutive_failures
        self.max_skipped_interactions = max_skipped_interactions
        self.user_config = (
            config.model_dump(mode="json") if isinstance(config, BaseModel) else config
        )
        self.restart = restart
        self.progress = progress
        self.plots = plots
        self.window = window
        self.metrics_every = metrics_every
        self.history: list[Session] = []
        self._errors: list[str] = []
        self._saved_states = ""

    # -- the run ------------------------------------------------------------------------

    def run(self) -> LifelongMetrics:
        """Run (or resume) the stream; return the metrics of all finished sessions."""
        for callback in self.callbacks:  # a callback that cannot work here says so now
            callback.setup(self.agent, self.env)
        folder = self._folder or (
            RunDirectory(self.output_dir) if self.output_dir is not None else None
        )
        self._folder = None  # the run owns the folder now, and closes it
        try:
            return self._run(folder)
        finally:
            if folder is not None:
                folder.close()

    def _run(self, folder: RunDirectory | None) -> LifelongMetrics:
        stream = self.order[: self.max_tasks] if self.max_tasks is not None else self.order
        if folder is not None:
            self._open(folder)
        correct = sum(s.outcome == EvaluationOutcome.CORRECT for s in self.history)
        failures = 0
        bar = tqdm(
            total=len(stream),
            initial=min(len(self.history), len(stream)),
            unit="task",
            disable=not self.progress,
            dynamic_ncols=True,
        )
        try:
            for task_index in stream[len(self.history) :]:
                session = self._run_task(task_index)
                self.history.append(session)
                if folder is not None:
                    self._save(folder, session)
                correct += session.outcome == EvaluationOutcome.CORRECT
                bar.update()
                bar.set_postfix(success=f"{correct / len(self.history):.1%}", refresh=False)
                failures = failures + 1 if session.status in FAILURE_STATUSES else 0
                if self.max_consecutive_failures and failures >= self.max_consecutive_failures:
                    self._finish(folder)
                    raise RunAbortedError(
                        f"stopped after {failures} sessions in a row failed (last: "
                        f"{session.status.value}: {session.error}); fix the cause and run "
                        "the same command again to go on (the failed sessions stay recorded)"
                    )
        finally:
            bar.close()
        return self._finish(folder)

    def _open(self, folder: RunDirectory) -> None:
        """Start a new run in `folder`, or resume the one it holds."""
        config = self.run_config()
        if self.restart:
            folder.clear()
        else:
            folder.refuse_other_config(config)
        history, states = folder.load()
        self._check_history(folder, history)
        folder.write_json(CONFIG_FILE, config)
        self.history = history
        for key, callback in self._keyed_callbacks():
            if key in states:
                callback.load_state(states[key])
        self._saved_states = json.dumps(self._callback_states(), sort_keys=True, default=str)
        if not states and not history:
            return
        self._errors = []
        self._fire("restore_state", None, SessionControl())
        if self._errors:
            raise RunAbortedError(
                f"cannot resume: {self._errors[0]}; fix the callback, or start over with "
                "--overwrite (restart=True)"
            )
        logger.info("resuming %s after %d sessions", folder.path, len(history))

    def _check_history(self, folder: RunDirectory, history: list[Session]) -> None:
        """The recorded sessions must be the stream's first tasks, in order, each once."""
        if len(history) > len(self.order):
            raise RunDirectoryError(
                f"{folder.sessions_path} records {len(history)} sessions but the run's task "
                f"stream has {len(self.order)}; {REPAIR}"
            )
        for number, (session, expected) in enumerate(
            zip(history, self.order, strict=False), start=1
        ):
            if session.task_index != expected:
                raise RunDirectoryError(
                    f"{folder.sessions_path}: session {number} is task {session.task_index}, "
                    f"but task {expected} comes there in the run's order (a duplicated, "
                    f"removed or reordered line); {REPAIR}"
                )

    def _save(self, folder: RunDirectory, session: Session) -> None:
        states = self._callback_states()
        text = json.dumps(states, sort_keys=True, default=str)
        changed, self._saved_states = text != self._saved_states, text
        folder.append_session(session, states if changed else None)
        if len(self.history) % self.metrics_every == 0:
            folder.write_json(METRICS_FILE, self.metrics().model_dump(mode="json"))

    def _keyed_callbacks(self) -> list[tuple[str, Callback]]:
        return list(zip(state_keys(self.callbacks), self.callbacks, strict=True))

    def _callback_states(self) -> dict[str, Any]:
        return {key: callback.state() for key, callback in self._keyed_callbacks()}

    def _finish(self, folder: RunDirectory | None) -> LifelongMetrics:
        metrics = self.metrics()
        if folder is not None:
            folder.write_json(METRICS_FILE, metrics.model_dump(mode="json"))
            if self.plots and self.history:
                write_plots(metrics, folder.path)
        if self.progress:
            print(format_report(metrics))
        return metrics

    def metrics(self) -> LifelongMetrics:
        """The metrics of the sessions finished so far."""
        return compute_metrics(self.history, window=self.window)

    def run_config(self) -> dict[str, Any]:
        """What must match for a rerun to resume: environment, tasks, agent, callbacks."""
        env = self.env.unwrapped
        spec = env.spec  # not the wrapper's, which deep-copies the arguments
        order = json.dumps(self.order).encode()
        config = {
            "env": spec.id if spec is not None else type(env).__qualname__,
            "env_kwargs": spec.kwargs if spec is not None else {},
            "tasks": {
                "count": len(self.order),
                "order_sha256": hashlib.sha256(order).hexdigest()[:16],
            },
            "order": self.order_name,
            "seed": self.seed,
            "agent": type(self.agent).__qualname__,
            "callbacks": [type(c).__qualname__ for c in self.callbacks],
            "user": self.user_config,
        }
        text = json.dumps(config, default=lambda o: f"<{type(o).__name__}>")
        return json.loads(_URL_PASSWORD.sub(r"\1:***@", text))  # no passwords on disk

    # -- one task -----------------------------------------------------------------------

    def _run_task(self, task_index: int) -> Session:
        """Run one task from session creation to the state-save event."""
        self._errors = []
        control = self._fire("on_session_create", Session(task_index=task_index), SessionControl())
        try:
            self.env.reset(options={"task_index": task_index})
        except Exception as error:  # a back-end that cannot start the task
            logger.exception("environment failed to reset for task %d", task_index)
            return Session(
                task_index=task_index,
                skills=list(self.env.unwrapped.tasks[task_index].skills),
                status=SessionStatus.TASK_ENVIRONMENT_ERROR,
                error=f"{type(error).__name__}: {error}",
            )
        session: Session = self.env.unwrapped.session
        control = self._fire("on_environment_reset", session, control)
        self._converse(session, control)
        control = self._fire("on_environment_complete", session, control)
        self._fire("on_state_save", session, control)
        if self._errors:
            session.status = SessionStatus.TASK_UNKNOWN_ERROR
            session.error = "; ".join(self._errors)
        return session  # the environment makes a new Session at the next reset

    def _converse(self, session: Session, control: SessionControl) -> None:
        """Alternate agent replies and environment steps until the session is finished."""
        skipped = 0
        while not session.finished:
            if self._errors:
                self._end(session, SessionStatus.TASK_UNKNOWN_ERROR, "")
            elif control.end_session:
                self._end(session, SessionStatus.COMPLETED, "")
            elif control.skip_next_inference:
                control.skip_next_inference = False
            else:
                control = self._infer(session, control)
            if session.finished or self._errors or control.end_session:
                continue
            if control.skip_next_interaction:
                control.skip_next_interaction = False
                skipped += 1
                if skipped >= self.max_skipped_interactions:
                    self._errors.append(f"callbacks skipped {skipped} interactions in a row")
                continue
            if control.reply is None:
                self._errors.append("skip_next_inference was set but no reply was given")
                continue
            reply, control.reply = control.reply, None
            skipped = 0
            try:
                self.env.step(reply)
            except Exception as error:
                logger.exception("environment failed in step of task %d", session.task_index)
                message = f"{type(error).__name__}: {error}"
                self._end(session, SessionStatus.TASK_ENVIRONMENT_ERROR, message)
                continue
            control = self._fire("on_environment_interact", session, control)

    def _infer(self, session: Session, control: SessionControl) -> SessionControl:
        """Ask the agent for the next reply; an agent failure ends the session."""
        try:
            control.reply = self.agent.act(session)
        except AgentError as error:
            self._end(session, error.status, f"{type(error).__name__}: {error}")
            return control
        except Exception as error:
            logger.exception("agent failed on task %d", session.task_index)
            message = f"{type(error).__name__}: {error}"
            self._end(session, SessionStatus.AGENT_UNKNOWN_ERROR, message)
            return control
        return self._fire("on_agent_inference", session, control)

    def _end(self, session: Session, status: SessionStatus, error: str) -> None:
        """Stop a running session with `status` and let the environment score it."""
        env = self.env.unwrapped
        if env.session is session and env.task is not None and not session.finished:
            try:
                env.end_task(status, error)
            except Exception as failure:
                logger.exception("environment failed to complete task %d", session.task_index)
                session.error = session.error or f"{type(failure).__name__}: {failure}"
            return
        session.status = status
        if error:
            session.error = session.error or error

    def _fire(self, event: str, session: Session | None, control: SessionControl) -> SessionControl:
        """Call one event's handler on every callback; a failure is recorded, not raised."""
        for callback in self.callbacks:
            try:
                result = getattr(callback, event)(
                    self.agent, self.env, session, self.history, control
                )
            except Exception as error:
                logger.exception("callback %s failed in %s", type(callback).__name__, event)
                self._errors.append(
                    f"{type(callback).__name__}.{event}: {type(error).__name__}: {error}"
                )
                continue
            if result is not None:
                control = result
        return control
