"""Tasks of a lifelong stream in flight: their sessions move in lockstep turns.

Up to K tasks run at once, each in an environment of its own. A turn asks the agent once
for the replies of every session that waits for one (`Agent.act_batch`: one batch for a
local model, concurrent requests for a served one), then steps those sessions'
environments at once (in threads). Callbacks run in the caller's thread, in the stream's
order within each phase of a turn, so the order of every event is fixed by the stream
and the replies, never by timing.

Task t starts only after task t-K has finished; the completion events of a task
(`on_environment_complete`, `on_state_save`) fire in the stream's order, the moment the
task K places later is about to start (or at the end of the stream), and every event of
task t shows the callbacks the sessions of tasks 0..t-K only. So what a method can know
when it acts on task t is fixed by the order alone, and a run with a given K is
reproducible. With K=1 this is one session at a time, event for event.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import gymnasium as gym

from lifelong_gym.agents import Agent, AgentError
from lifelong_gym.run.callbacks import Callback, RunState, SessionControl, fire
from lifelong_gym.run.cost import CostMeter
from lifelong_gym.session import Session, SessionStatus

logger = logging.getLogger(__name__)


@dataclass(eq=False)
class TaskInFlight:
    """A task of the stream on its way: its environment, session, control and history."""

    position: int  # in the stream
    env: gym.Env
    session: Session
    history: list[Session]  # the finished sessions its callbacks see: tasks 0..position-K
    control: SessionControl = field(default_factory=SessionControl)
    errors: list[str] = field(default_factory=list)  # of callbacks; they end the session
    skipped: int = 0  # interactions skipped in a row
    started: bool = False  # the environment started the task


class Lockstep:
    """Plays a stream's tasks, one per environment at a time, in lockstep turns."""

    def __init__(
        self,
        agent: Agent,
        callbacks: Sequence[Callback],
        concurrency: int,
        max_skipped_interactions: int,
        meter: CostMeter | None = None,
        probe_of: list[Session] | None = None,
        run: Any = None,
        state: RunState | None = None,
    ):
        """`probe_of`: the stream's finished sessions, when the tasks played are probes
        (docs/metrics.md): then every session is a probe and its callbacks see them all.
        `run` and `state`: what the callbacks' handlers get as such (the `Runner`, its
        `RunState`); a fresh state when none is given."""
        self.probe_of = probe_of
        self.run = run
        self.state = state if state is not None else RunState()
        self.agent = agent
        self.meter = meter or CostMeter(agent)  # what each task costs
        self.callbacks = list(callbacks)
        self.concurrency = concurrency
        self.max_skipped_interactions = max_skipped_interactions
        self._pool: ThreadPoolExecutor | None = None

    def play(
        self,
        stream: Sequence[int],
        history: list[Session],
        envs: Sequence[gym.Env],
        record: Callable[[Session], None],
        stopping: Callable[[], bool] = lambda: False,
    ) -> None:
        """Run the tasks of `stream` after the `history` done, in order, into `record`.

        `record` gets each finished session in the stream's order, after its completion
        events; it is expected to append it to `history`. Once `stopping()` is true, no
        further task starts and those in flight are finished.
        """
        waiting = deque(range(len(history), len(stream)))
        flying: deque[TaskInFlight] = deque()
        free = list(envs)[::-1]
        threads = ThreadPoolExecutor(len(envs)) if len(envs) > 1 else nullcontext()
        with threads as self._pool:
            while waiting or flying:
                if stopping():
                    waiting.clear()
                starting = []
                # task t starts once task t-K has finished, whose completion comes first
                while waiting and (len(flying) < len(envs) or flying[0].session.finished):
                    if len(flying) == len(envs):
                        free.append(flying[0].env)
                        record(self._complete(flying.popleft()))
                    position = waiting.popleft()
                    visible = (
                        self.probe_of
                        if self.probe_of is not None
                        else history[: max(0, position - self.concurrency + 1)]
                    )
                    starting.append(self._create(stream[position], position, free.pop(), visible))
                    flying.append(starting[-1])
                while not waiting and flying and flying[0].session.finished:
                    record(self._complete(flying.popleft()))
                self._start(starting)
                running = [task for task in flying if not task.session.finished]
                if running:
                    self._turn(running)

    def _create(
        self, task_index: int, position: int, env: gym.Env, history: list[Session]
    ) -> TaskInFlight:
        """Make the session of a task of the stream, to run in `env`."""
        probe = self.probe_of is not None
        task = TaskInFlight(position, env, Session(task_index=task_index, probe=probe), history)
        self.meter.begin(position, task_index)
        task.control = self._fire("on_session_create", task)
        return task

    def _start(self, tasks: list[TaskInFlight]) -> None:
        """Reset each task's environment to its task (at once); a failed reset ends it."""
        outcomes = self._each(
            [partial(t.env.reset, options={"task_index": t.session.task_index}) for t in tasks]
        )
        for task, outcome in zip(tasks, outcomes, strict=True):
            index = task.session.task_index
            if isinstance(outcome, Exception):  # a back-end that cannot start the task
                logger.error("environment failed to reset for task %d", index, exc_info=outcome)
                task.session = Session(
                    task_index=index,
                    skills=list(task.env.unwrapped.tasks[index].skills),
                    status=SessionStatus.TASK_ENVIRONMENT_ERROR,
                    error=f"{type(outcome).__name__}: {outcome}",
                    probe=task.session.probe,
                )
                continue
            task.env.unwrapped.session.probe = task.session.probe
            task.session = task.env.unwrapped.session
            task.started = True
            opening = task.session.chat_history[0].content if task.session.chat_history else ""
            task.control = self._fire("on_environment_reset", task)
            if task.session.chat_history:  # what the methods put into the opening prompt
                self.meter.opening(task.position, opening, task.session.chat_history[0].content)

    def _turn(self, running: list[TaskInFlight]) -> None:
        """One turn of every running session: the agent's replies, then the environments'."""
        asking = []
        for task in running:
            if task.errors:
                self._end(task, SessionStatus.TASK_UNKNOWN_ERROR, "")
            elif task.control.end_session:
                self._end(task, SessionStatus.COMPLETED, "")
            elif task.control.skip_next_inference:
                task.control.skip_next_inference = False
            else:
                asking.append(task)
        self._infer(asking)
        stepping = []
        for task in running:
            control = task.control
            if task.session.finished or task.errors or control.end_session:
                continue
            if control.skip_next_interaction:
                control.skip_next_interaction = False
                task.skipped += 1
                if task.skipped >= self.max_skipped_interactions:
                    task.errors.append(f"callbacks skipped {task.skipped} interactions in a row")
                continue
            if control.reply is None:
                task.errors.append("skip_next_inference was set but no reply was given")
                continue
            stepping.append((task, control.reply))
            control.reply = None
            task.skipped = 0
        self._step(stepping)

    def _infer(self, tasks: list[TaskInFlight]) -> None:
        """Ask the agent for the next reply of each task; an agent failure ends its session."""
        replies = self.meter.agent_replies(
            [t.position for t in tasks], partial(self._replies, [t.session for t in tasks])
        )
        for task, reply in zip(tasks, replies, strict=True):
            if isinstance(reply, AgentError):
                self._end(task, SessionStatus(reply.status), f"{type(reply).__name__}: {reply}")
            elif isinstance(reply, Exception):
                index = task.session.task_index
                logger.error("agent failed on task %d", index, exc_info=reply)
                message = f"{type(reply).__name__}: {reply}"
                self._end(task, SessionStatus.AGENT_UNKNOWN_ERROR, message)
            else:
                task.control.reply = reply
                task.control = self._fire("on_agent_inference", task)

    def _replies(self, sessions: list[Session]) -> list[str | Exception]:
        """The agent's reply to each session, or its failure: one batch for several
        sessions, asked again one at a time if the batch fails (so that one session's
        failure, a history too long for the model, say, is that session's alone)."""
        if len(sessions) > 1:
            try:
                replies = self.agent.act_batch(sessions)
            except Exception as error:
                logger.info("a batch of %d failed (%s); one at a time", len(sessions), error)
            else:
                if len(replies) == len(sessions):
                    return list(replies)
                logger.warning(
                    "act_batch gave %d replies to %d sessions", len(replies), len(sessions)
                )
        return [_outcome(partial(self.agent.act, session)) for session in sessions]

    def _step(self, stepping: list[tuple[TaskInFlight, str]]) -> None:
        """Send each reply to its task's environment (at once); a broken step ends its task."""
        outcomes = self._each([partial(task.env.step, reply) for task, reply in stepping])
        for (task, _reply), outcome in zip(stepping, outcomes, strict=True):
            if isinstance(outcome, Exception):
                index = task.session.task_index
                logger.error("environment failed in step of task %d", index, exc_info=outcome)
                message = f"{type(outcome).__name__}: {outcome}"
                self._end(task, SessionStatus.TASK_ENVIRONMENT_ERROR, message)
                continue
            task.control = self._fire("on_environment_interact", task)

    def _each(self, calls: list[Callable[[], Any]]) -> list[Any]:
        """Run environment calls at once (in the pool's threads); each one's result or error."""
        if self._pool is None or len(calls) == 1:
            return [_outcome(call) for call in calls]
        return list(self._pool.map(_outcome, calls))

    def _complete(self, task: TaskInFlight) -> Session:
        """The completion events of a finished task; callback errors mark its session."""
        session = task.session
        if not task.started:
            return session
        task.control = self._fire("on_environment_complete", task)
        self._fire("on_state_save", task)
        if task.errors:
            session.status = SessionStatus.TASK_UNKNOWN_ERROR
            session.error = "; ".join(task.errors)
        return session  # the environment makes a new Session at the next reset

    def _end(self, task: TaskInFlight, status: SessionStatus, error: str) -> None:
        """Stop a running session with `status` and let the environment score it."""
        env, session = task.env.unwrapped, task.session
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

    def _fire(self, event: str, task: TaskInFlight) -> SessionControl:
        """Call one event's handler of every callback for `task`; failures go to its errors."""
        self.state.current_task = task.session.task_index
        self.state.probing = self.probe_of is not None
        call = partial(
            fire,
            self.callbacks,
            event,
            self.run,
            self.state,
            task.control,
            task.errors,
            agent=self.agent,
            env=task.env,
            session=task.session,
            history=task.history,
        )
        return self.meter.method_event(task.position, call)


def _outcome(call: Callable[[], Any]) -> Any:
    """What `call` returns, or the exception it raised."""
    try:
        return call()
    except Exception as error:  # noqa: BLE001 - the caller turns it into a session status
        return error
