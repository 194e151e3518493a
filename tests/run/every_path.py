"""A run of the arithmetic environment that takes every path of the runner, for golden files.

Its agent answers wrongly, fails or hits the context limit on some tasks; its environment
cannot start one task and breaks in a step of another; its callbacks re-ask, end
sessions, send their own reply, raise, keep state and write what they saw of the history
into the sessions. `tests/data/runner-k1/` holds what the runner of one session at a time
wrote for it (before sessions could run in flight).
"""

from __future__ import annotations

from pathlib import Path

from lifelong_gym.agents import AgentContextLimitError
from lifelong_gym.run import Callback, Runner
from lifelong_gym.session import EvaluationOutcome, Role
from tests.arithmetic_env import PatternAgent, SumEnv, sum_tasks

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "runner-k1"
TASKS = 40


class TroubledEnv(SumEnv):
    """Cannot start task 5; its back-end breaks in the first step of task 17."""

    def _start_task(self, task):
        if task.index == 5:
            raise ConnectionError("database went away")
        return super()._start_task(task)

    def interact(self, action):
        if self.task is not None and self.task.index == 17:
            raise OSError("disk full")
        return super().interact(action)


class Steering(Callback):
    """Re-asks once on task 2, ends task 9 at once, answers task 11 itself, raises on 23.

    Its state (the correct sessions it saw finish, and how many turns it saw) is saved
    with the run; each session's details record what it saw of the history.
    """

    state_attributes = ("correct", "turns")

    def __init__(self):
        self.correct: list[int] = []
        self.turns = 0

    def on_environment_reset(self, run, state, control, *, agent, env, session, history, **kwargs):
        solved = sum(s.outcome == EvaluationOutcome.CORRECT for s in history)
        session.details["history_seen"] = [len(history), solved]
        if session.task_index == 9:
            control.end_session = True
        if session.task_index == 11:
            control.skip_next_inference = True
            control.reply = "Action: Think"

    def on_agent_inference(self, run, state, control, *, agent, env, session, history, **kwargs):
        if (
            session.task_index == 2
            and session.agent_turns == 0
            and "reasked" not in session.details
        ):
            session.details["reasked"] = True
            session.add(Role.AGENT, control.reply or "")
            session.add(Role.USER, "Think once more, please.")
            control.skip_next_interaction = True
        if session.task_index == 23:
            raise ValueError("the callback broke")
        return control

    def on_environment_interact(
        self, run, state, control, *, agent, env, session, history, **kwargs
    ):
        self.turns += 1

    def on_environment_complete(
        self, run, state, control, *, agent, env, session, history, **kwargs
    ):
        if session.outcome == EvaluationOutcome.CORRECT:
            self.correct.append(session.task_index)


class TroubledAgent(PatternAgent):
    """Wrong on 3 and 30, down on 7, out of context on 13."""

    def __init__(self, tasks):
        super().__init__(tasks, wrong={3, 30}, fail={7})

    def act(self, session):
        if session.task_index == 13:
            raise AgentContextLimitError("the history takes 9000 tokens")
        return super().act(session)


def run_every_path(folder: Path, **runner_kwargs) -> Runner:
    """Run the troubled stream into `folder` with the runner's keyword arguments."""
    env = TroubledEnv(sum_tasks(TASKS))
    runner = Runner(
        env,
        TroubledAgent(env.tasks),
        [Steering()],
        output=folder,
        progress=False,
        plots=False,
        **runner_kwargs,
    )
    runner.run()
    return runner
