"""The callbacks' one shape, (run, state, control, **kwargs), checked when a callback joins
a run, and the public run state."""

from __future__ import annotations

import pytest

from lifelong_gym.errors import CallbackSpecError
from lifelong_gym.run import Callback, Runner, RunState, SessionControl
from lifelong_gym.run.callbacks import fire
from lifelong_gym.session import EvaluationOutcome
from tests.arithmetic_env import PatternAgent, SumEnv


class StateLog(Callback):
    """Writes down, at each completion, what the run and its state said."""

    def __init__(self):
        self.seen: list[tuple] = []

    def on_environment_complete(self, run, state, control, *, session, history, **kwargs):
        self.seen.append(
            (run, state.tasks_total, state.tasks_done, state.correct, state.current_task)
        )
        self.seen.append(session.task_index)


class OldShape(Callback):
    """A handler with five positional arguments and no keyword."""

    def __init__(self):
        self.calls: list[tuple] = []

    def on_environment_complete(self, agent, env, session, history, control):
        self.calls.append((agent, env, session.task_index, len(history), control))


class NamesOnly(Callback):
    """A handler with no **kwargs that names one keyword of four."""

    def __init__(self):
        self.sessions: list[int] = []

    def on_environment_reset(self, run, state, control, session):
        self.sessions.append(session.task_index)


def runner(tmp_path, callbacks, **kwargs):
    env = SumEnv()
    agent = PatternAgent(env.tasks, wrong={3})
    return Runner(env, agent, callbacks, output=tmp_path / "run", progress=False, **kwargs)


def test_handlers_get_the_runner_and_its_state_as_the_stream_goes(tmp_path):
    log = StateLog()
    run = runner(tmp_path, [log], max_tasks=6)
    run.run()
    history = run.history
    correct_before = [
        sum(s.outcome == EvaluationOutcome.CORRECT for s in history[:i]) for i in range(6)
    ]
    expected = []
    for i, session in enumerate(history):
        expected += [(run, 6, i, correct_before[i], session.task_index), session.task_index]
    assert log.seen == expected
    assert run.state.tasks_done == 6 and run.state.correct == correct_before[-1] + 1
    assert isinstance(run.state, RunState) and run.state.probe_results == []


@pytest.mark.parametrize(
    ("callback", "handler"),
    [
        (OldShape, "on_environment_complete(agent, env, session, history, control)"),
        (NamesOnly, "on_environment_reset(run, state, control, session)"),
    ],
)
def test_a_handler_of_another_shape_is_refused_in_one_line_when_it_joins(
    tmp_path, callback, handler
):
    with pytest.raises(CallbackSpecError) as refused:
        runner(tmp_path, [callback()], max_tasks=2)
    message = str(refused.value)
    assert message.startswith(f"callback tests.run.test_callback_shape.{callback.__name__}: ")
    assert handler in message and "(self, run, state, control, **kwargs)" in message
    assert "\n" not in message
    run = runner(tmp_path, [], max_tasks=2)
    with pytest.raises(CallbackSpecError, match=callback.__name__):
        run.add_callback(callback)
    assert not any(isinstance(c, callback) for c in run.callbacks)


class AllNamed(Callback):
    """A handler that names every keyword of its event, and no **kwargs."""

    def __init__(self):
        self.sessions: list[int] = []

    def on_environment_reset(self, run, state, control, *, agent, env, session, history):
        self.sessions.append(session.task_index)


def test_a_handler_naming_every_keyword_is_called_the_one_way(tmp_path):
    named = AllNamed()
    run = runner(tmp_path, [named], max_tasks=3)
    run.run()
    assert named.sessions == [s.task_index for s in run.history]


def test_an_event_can_pass_a_new_keyword_without_breaking_handlers():
    seen, errors = [], []

    class Takes(Callback):
        def on_state_save(self, run, state, control, *, session, **kwargs):
            seen.append((session, sorted(kwargs)))

    control = fire(
        [Takes(), AllNamed()],
        "on_state_save",
        None,
        RunState(),
        SessionControl(),
        errors,
        agent=None,
        env=None,
        session="s",
        history=[],
        added_in_a_later_release=1,
    )
    assert errors == [] and isinstance(control, SessionControl)
    assert seen == [("s", ["added_in_a_later_release", "agent", "env", "history"])]
