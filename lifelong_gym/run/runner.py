"""The runner: drives an agent through a lifelong environment's task stream, with callbacks.

The appendix's controller in the shape of `transformers.Trainer`: it makes a session per
task, lets the agent and the environment take turns, fires the seven callback events,
keeps the history of finished sessions, and snapshots every finished session so that
running the same command again resumes the run.

With `concurrency=K`, up to K tasks of the stream are in flight, each in an environment of
its own, and they move in lockstep turns: a turn asks the agent once for the replies of
every session that waits for one (`Agent.act_batch`), then steps their environments at
once. Task t starts only after task t-K has finished, the completion events fire in the
stream's order, and every event of task t shows its callbacks the sessions of tasks
0..t-K only: the order alone fixes what a method can know, so a run with a given K is
reproducible. K=1 runs one session at a time.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from functools import partial
from typing import Any

import gymnasium as gym

from lifelong_gym.agents import Agent
from lifelong_gym.errors import RunAbortedError, RunConfigError
from lifelong_gym.metrics import LifelongMetrics, compute_metrics
from lifelong_gym.orders import task_order
from lifelong_gym.registration import with_absolute_paths
from lifelong_gym.results.content import CONTENT, run_content
from lifelong_gym.results.cost_summary import CostSummary, summarize_costs, write_cost_summary
from lifelong_gym.results.costs import CostLog, SessionCost
from lifelong_gym.results.folder import (
    METRICS_FILE,
    REPAIR,
    RunDirectory,
    RunDirectoryError,
    disk_space_of,
)
from lifelong_gym.run.callback_errors import (
    RUN_LOG,
    callback_hook,
    callback_name,
    write_traceback,
)
from lifelong_gym.run.callbacks import (
    Callback,
    RunState,
    SessionControl,
    check_handlers,
    fire,
    state_keys,
)
from lifelong_gym.run.cost import CostMeter
from lifelong_gym.run.default_callbacks import ProbesCallback, default_callbacks, of_the_user
from lifelong_gym.run.lockstep import Lockstep
from lifelong_gym.run.probes import Probes
from lifelong_gym.run.registry import check_needs
from lifelong_gym.run.settings import RunSettings, settings_with
from lifelong_gym.session import SETUP_FAILURE_STATUSES, Session
from lifelong_gym.tasks import TaskSet

logger = logging.getLogger(__name__)


class Runner:
    """Runs an agent through the task stream of a lifelong environment.

    Args:
        env: an environment whose `unwrapped` is a `LifelongEnv` (wrappers are fine).
        agent: the agent that writes the replies.
        callbacks: observers of the events, run in list order after the runner's own
            (`default_callbacks.py`: progress bar, probes, failure stop, plots), which
            `remove_callback` takes out.
        settings: where the run writes, its order, when it stops (`RunSettings`, or the
            whole `RunConfig` of a run); `fields` set its fields on top, so
            `Runner(env, agent, output="runs/x", max_tasks=10)` is the short way.
        folder: the output folder already opened and locked (`RunDirectory`), which the
            run then closes; default: `settings.output` (None keeps the run in memory).
        make_env: builds each further environment that `concurrency` needs (the runner
            closes those); default `gym.make(env.spec, tasks=env.unwrapped.tasks)`: the
            same id and arguments, sharing the task set already loaded.
        probes: a probe set played at points of the stream (`lifelong_gym.run.probes`), by
            the `ProbesCallback` added for it.
    """

    def __init__(
        self,
        env: gym.Env,
        agent: Agent,
        callbacks: Sequence[Callback] = (),
        settings: RunSettings | None = None,
        *,
        folder: RunDirectory | None = None,
        make_env: Callable[[], gym.Env] | None = None,
        probes: Probes | None = None,
        **fields: Any,
    ):
        self.settings = settings = settings_with(settings, fields)
        self.env = env
        self.agent = agent
        self.callbacks: list[Callback] = []
        for callback in [*default_callbacks(probes), *callbacks]:
            self.add_callback(callback)
        self._folder = folder
        self.output_dir = folder.path if folder is not None else settings.output
        self.order = task_order(env.unwrapped.tasks, settings.order, settings.seed)
        self.make_env = make_env
        self.history: list[Session] = []
        self.costs: list[SessionCost | None] = []  # each session's, None where unrecorded
        self.price = settings.price()
        self._meter = CostMeter(agent)
        self._saved_states = ""
        self.state = RunState()  # what the callbacks see of the run's progress
        self.stop_requested = False  # see `request_stop`
        self._log_to: RunDirectory | None = None  # where a failing callback's traceback goes
        # where the runner says what it does beyond its progress bar (the sessions a retry
        # plays again): the log by default; the command line prints it
        self.notify: Callable[[str], None] = logger.info

    # -- the callbacks ------------------------------------------------------------------

    def add_callback(self, callback: Callback | type[Callback]) -> None:
        """Add a callback (an instance, or a class to build with no argument) after the
        others; a handler that cannot be called as the runner calls it is refused here."""
        callback = callback() if isinstance(callback, type) else callback
        check_handlers(callback)
        self.callbacks.append(callback)

    def pop_callback(self, callback: Callback | type[Callback]) -> Callback | None:
        """Remove and return a callback: this instance, or the first of this class; None
        when the run has no such callback."""
        by_class = isinstance(callback, type)
        for present in self.callbacks:
            if present is callback or (by_class and isinstance(present, callback)):
                self.callbacks.remove(present)
                return present
        return None

    def remove_callback(self, callback: Callback | type[Callback]) -> None:
        """Remove a callback: this instance, or the first of this class (e.g.
        `remove_callback(ProgressCallback)` for a run without its progress bar)."""
        self.pop_callback(callback)

    @property
    def probes(self) -> Probes | None:
        """The run's probe set: the one its `ProbesCallback` plays, if it has one."""
        playing = (c for c in self.callbacks if isinstance(c, ProbesCallback))
        return next((callback.probes for callback in playing), None)

    # -- the run ------------------------------------------------------------------------

    def run(self) -> LifelongMetrics:
        """Run (or resume) the stream; return the metrics of all finished sessions."""
        check_needs(self.callbacks)
        folder = self._folder or (
            RunDirectory(self.output_dir) if self.output_dir is not None else None
        )
        self._folder = None  # the run owns the folder now, and closes it
        self._log_to = folder
        if folder is None:
            self._setup_callbacks()
            return self._run(folder)
        try:
            self._setup_callbacks()
            with disk_space_of(folder.path, "run the same command again to resume"):
                return self._run(folder)
        except BaseException:
            folder.abandon()  # a new run that recorded nothing leaves no folder
            raise
        finally:
            folder.close()

    def _setup_callbacks(self) -> None:
        """Let each callback check that it can work here (it says so now, not per task)."""
        for callback in self.callbacks:
            with self._callback_hook(callback, "setup"):
                callback.setup(self.agent, self.env)

    def _callback_hook(self, callback: Callback, hook: str) -> AbstractContextManager[None]:
        """A hook of the user's callback, whose exception stops the run in one line."""
        log_folder = self._log_to.log_folder if self._log_to is not None else None
        return callback_hook(callback_name(type(callback)), hook, log_folder)

    def log_traceback(self, title: str) -> None:
        """Keep the traceback being handled, under `title`, in the run folder's `run.log`
        (the log for a run without a folder): a callback's failure is one line elsewhere."""
        if self._log_to is None:
            logger.exception(title)
        else:
            write_traceback(self._log_to.path, title)

    def request_stop(self) -> None:
        """Start no further task: `run` finishes the tasks in flight, records them and
        returns; the same run resumes later. Safe to call from a signal handler."""
        self.stop_requested = True

    def _run(self, folder: RunDirectory | None) -> LifelongMetrics:
        stream = self.stream
        if folder is not None:
            self._open(folder)
        remaining = len(stream) - len(self.history)
        envs = [self.env, *self._more_envs(min(self.settings.concurrency, remaining) - 1)]
        self._recount()
        lockstep = Lockstep(
            self.agent,
            self.callbacks,
            self.settings.concurrency,
            self.settings.max_skipped_interactions,
            self._meter,
            run=self,
            state=self.state,
        )
        try:
            self._fire_run_event("on_run_begin")
            record = partial(self._record, folder=folder)
            lockstep.play(stream, self.history, envs, record, lambda: self.stop_requested)
        except RunAbortedError:  # a callback stopped the run: what it did is written
            self._finish(folder)
            raise
        finally:
            for env in envs[1:]:
                env.close()
        return self._finish(folder)

    @property
    def stream(self) -> list[int]:
        """The task indices this run plays, in order: the order, cut at `max_tasks`."""
        cut = self.settings.max_tasks
        return self.order[:cut] if cut is not None else self.order

    def _record(self, session: Session, folder: RunDirectory | None) -> None:
        """Append a finished session to the history and the run folder, count it in the
        state, and tell the callbacks."""
        cost = self._meter.end(len(self.history))
        self.history.append(session)
        self.costs.append(cost)
        if folder is not None:
            CostLog(folder.path).append(cost)  # before the session's line: see CostLog
            self._save(folder, session)
        state = self.state
        state.tasks_done = len(self.history)
        state.correct += session.solved
        state.errored += session.errored
        failed = session.status in SETUP_FAILURE_STATUSES
        state.consecutive_failures = state.consecutive_failures + 1 if failed else 0
        self._fire_run_event("on_session_recorded", session=session)

    def _fire_run_event(self, event: str, **kwargs: Any) -> None:
        """Call one run event's handler on every callback, in order: what a handler raises
        stops the run (one `CallbackError` line, its traceback in `run.log`; the suite's
        own errors, `RunAbortedError` among them, as they are)."""
        keywords = {"agent": self.agent, "env": self.env, "history": self.history, **kwargs}
        control = SessionControl()
        for callback in self.callbacks:
            with self._callback_hook(callback, event):
                getattr(callback, event)(self, self.state, control, **keywords)

    def _recount(self) -> None:
        """Set the run state from the history: a new run, or one resumed."""
        total = len(self.stream)
        correct = sum(s.solved for s in self.history)
        errored = sum(s.errored for s in self.history)
        records = self.probes.records if self.probes is not None else []
        self.state = RunState(
            total, len(self.history), correct, errored=errored, probe_results=records
        )

    def _more_envs(self, count: int) -> list[gym.Env]:
        """`count` more environments like `env`, from `make_env` or from the env's spec."""
        made: list[gym.Env] = []
        try:
            for _ in range(count):
                made.append(self.make_env() if self.make_env is not None else self._copy_env())
        except BaseException:
            for env in made:
                env.close()
            raise
        return made

    def _copy_env(self) -> gym.Env:
        """A new environment of the same registered id, arguments and task set as `env`."""
        count = self.settings.concurrency
        needs = f"concurrency={count} runs {count} environments"
        if self.env.spec is None:
            raise RunConfigError(
                f"{needs}, and this {type(self.env.unwrapped).__name__} was not made by "
                "gym.make: pass make_env=... (a function that returns a new one)"
            )
        try:  # the task set loaded once, shared
            return gym.make(self.env.spec, tasks=self.env.unwrapped.tasks)
        except gym.error.Error as error:
            raise RunConfigError(
                f"{needs}, and {self.env.spec.id} cannot be made again from its spec "
                f"({error}): pass make_env=... (a function that returns a new one)"
            ) from None

    def _open(self, folder: RunDirectory) -> None:
        """Start a new run in `folder`, or resume the one it holds."""
        config = self.run_config()
        if self.settings.overwrite:
            folder.clear()
        else:
            folder.refuse_other_config(config)
        history, states = folder.load()
        self._check_history(folder, history)
        if self.settings.retry_errors and (cut := folder.cut_at_first_error()) is not None:
            self.notify(cut.describe())
            history, states = folder.load()
        folder.write_config(config)
        self.history = history
        self.costs = CostLog(folder.path).resume(history)
        if self.probes is not None:
            self.probes.resume(folder.path, len(history))
        for key, callback in self._keyed_callbacks():
            if key in states:
                with self._callback_hook(callback, "load_state"):
                    callback.load_state(states[key])
        self._saved_states = json.dumps(self._callback_states(), sort_keys=True, default=str)
        if not states and not history:
            return
        errors: list[str] = []
        self._recount()  # restore_state sees the resumed run's counts
        fire(
            self.callbacks,
            "restore_state",
            self,
            self.state,
            SessionControl(),
            errors,
            agent=self.agent,
            env=self.env,
            session=None,
            history=self.history,
        )
        if errors:
            raise RunAbortedError(
                f"cannot resume: {errors[0]} (traceback in {folder.path / RUN_LOG}); fix the "
                "callback, or start over with --overwrite (overwrite=True)"
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
        if session.errored and not self.state.errored:  # the first: a retry starts here
            folder.keep_state_before_error(len(self.history) - 1)
        folder.append_session(session, states if changed else None)
        if len(self.history) % self.settings.metrics_every == 0:
            folder.write_json(METRICS_FILE, self.metrics().model_dump(mode="json"))

    def _keyed_callbacks(self) -> list[tuple[str, Callback]]:
        """The user's callbacks, each with the key of its saved state."""
        users = of_the_user(self.callbacks)
        return list(zip(state_keys(users), users, strict=True))

    def _callback_states(self) -> dict[str, Any]:
        states = {}
        for key, callback in self._keyed_callbacks():
            with self._callback_hook(callback, "state"):
                states[key] = callback.state()
        return states

    def _finish(self, folder: RunDirectory | None) -> LifelongMetrics:
        metrics = self.metrics()
        if folder is not None:
            folder.write_json(METRICS_FILE, metrics.model_dump(mode="json"))
            write_cost_summary(folder.path, self.cost())
        self._fire_run_event("on_run_end", metrics=metrics)
        return metrics

    @property
    def probe_tasks(self) -> TaskSet | None:
        """The probe set's tasks, if the run has one."""
        return self.probes.env.unwrapped.tasks if self.probes is not None else None

    def cost(self) -> CostSummary:
        """The cost of the sessions finished so far."""
        return summarize_costs(self.costs, self.price)

    def metrics(self) -> LifelongMetrics:
        """The metrics of the sessions finished so far."""
        return compute_metrics(self.history, window=self.settings.window)

    def run_config(self) -> dict[str, Any]:
        """What must match for a rerun to resume: environment, tasks, agent, callbacks."""
        env = self.env.unwrapped
        spec = env.spec  # not the wrapper's, which deep-copies the arguments
        order = json.dumps(self.order).encode()
        config = {
            "env": spec.id if spec is not None else type(env).__qualname__,
            "env_kwargs": with_absolute_paths(spec.id, spec.kwargs) if spec is not None else {},
            "tasks": {
                "count": len(self.order),
                "order_sha256": hashlib.sha256(order).hexdigest()[:16],
            },
            "order": self.settings.order,
            "seed": self.settings.seed,
            "agent": type(self.agent).__qualname__,
            "callbacks": [type(c).__qualname__ for c in of_the_user(self.callbacks)],
            "user": self.settings.identity(),
        }
        # what callbacks see depends on the concurrency (absent: one at a time)
        if self.settings.concurrency > 1:
            config["concurrency"] = self.settings.concurrency
        if self.probes is not None:  # absent: a run without probes
            config["probes"] = self.probes.identity()
        config[CONTENT] = run_content(self.env, self.probe_tasks)
        return json.loads(json.dumps(config, default=lambda o: f"<{type(o).__name__}>"))
