"""The callbacks' shape: (run, state, control, **kwargs), the public run state, and the
release-0.1 shape still called with a deprecation warning."""

from __future__ import annotations

import warnings

import pytest

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
    """A callback written for release 0.1: five positional arguments."""

    def __init__(self):
        self.calls: list[tuple] = []

    def on_environment_complete(self, agent, env, session, history, control):
        self.calls.append((agent, env, session.task_index, len(history), control))


class NamesOnly(Callback):
    """A handler with no **kwargs gets just the keywords it names."""

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
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)  # the new shape never warns
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


def test_the_old_shape_is_called_alike_and_warns_once(tmp_path):
    old = OldShape()
    run = runner(tmp_path, [old], max_tasks=4)
    with pytest.warns(DeprecationWarning, match=r"OldShape.on_environment_complete .*0\.3"):
        run.run()
    assert [(a, e, t, n) for a, e, t, n, _ in old.calls] == [
        (run.agent, run.env, session.task_index, i) for i, session in enumerate(run.history)
    ]
    assert all(isinstance(control, SessionControl) for *_, control in old.calls)
    with warnings.catch_warnings(record=True) as caught:  # once per handler, not per event
        warnings.simplefilter("always")
        runner(tmp_path / "again", [OldShape()], max_tasks=2).run()
    assert not [w for w in caught if issubclass(w.category, DeprecationWarning)]


def test_a_handler_without_kwargs_gets_the_keywords_it_names(tmp_path):
    names = NamesOnly()
    run = runner(tmp_path, [names], max_tasks=3)
    run.run()
    assert names.sessions == [s.task_index for s in run.history]


def test_an_event_can_pass_a_new_keyword_without_breaking_handlers():
    seen, errors = [], []

    class Takes(Callback):
        def on_state_save(self, run, state, control, *, session, **kwargs):
            seen.append((session, sorted(kwargs)))

    control = fire(
        [Takes(), NamesOnly(), OldShape()],
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
