"""The runner's own services are callbacks: added to every run, removed or replaced by class
or instance, and no part of what a run records."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import pytest

import lifelong_gym
from lifelong_gym.agents import OracleAgent
from lifelong_gym.errors import CallbackError, RunAbortedError
from lifelong_gym.results.plots import LEARNING_CURVE_FILE
from lifelong_gym.run import Callback, Runner
from lifelong_gym.run.callback_errors import RUN_LOG
from lifelong_gym.run.default_callbacks import (
    FailureStopCallback,
    PlotsCallback,
    ProgressCallback,
)
from lifelong_gym.run.probes import Probes
from lifelong_gym.session import SessionStatus
from tests.arithmetic_env import DownAgent, PatternAgent, SumEnv

from .test_runner import Counter

gym.register_envs(lifelong_gym)
SHIPPED_DB = Path(lifelong_gym.__file__).parent / "data" / "db" / "default.jsonl"
RECORDED = ("sessions.jsonl", "metrics.json", "state.json", "config.json")


def make_runner(folder, callbacks=(), agent=None, **fields):
    env = SumEnv()
    agent = agent or PatternAgent(env.tasks, wrong={2})
    return Runner(env, agent, callbacks, output=folder, max_tasks=6, **fields)


def test_without_the_progress_callback_a_run_shows_no_bar(tmp_path, capsys):
    make_runner(tmp_path / "shown", plots=False).run()
    assert "6/6" in capsys.readouterr().err
    run = make_runner(tmp_path / "quiet", plots=False)
    run.remove_callback(ProgressCallback)
    run.run()
    assert capsys.readouterr().err == ""
    assert len(run.history) == 6


class StopAtFirstFailure(Callback):
    """A user's failure stop: one failed session is enough."""

    def on_session_recorded(self, run, state, control, *, session, **kwargs):
        if state.consecutive_failures:
            raise RunAbortedError(f"task {session.task_index} failed: stopping at once")


def test_a_users_failure_stop_replaces_the_runners(tmp_path):
    run = make_runner(tmp_path / "run", agent=DownAgent(), progress=False)
    assert isinstance(run.pop_callback(FailureStopCallback), FailureStopCallback)
    run.add_callback(StopAtFirstFailure)
    with pytest.raises(RunAbortedError, match="failed: stopping at once"):
        run.run()
    assert len(run.history) == 1
    assert (tmp_path / "run" / "metrics.json").exists()  # written before it stopped
    kept = make_runner(tmp_path / "again", agent=DownAgent(), max_consecutive_failures=2)
    kept.remove_callback(FailureStopCallback)  # no stop: every task is played
    kept.run()
    assert [s.status for s in kept.history] == [SessionStatus.AGENT_UNKNOWN_ERROR] * 6


def test_the_runners_stop_reads_its_setting(tmp_path):
    run = make_runner(tmp_path / "run", agent=DownAgent(), max_consecutive_failures=2)
    with pytest.raises(RunAbortedError, match="2 sessions in a row failed"):
        run.run()
    assert len(run.history) == 2


def test_pop_and_remove_take_a_class_or_an_instance(tmp_path):
    counter, other = Counter(), Counter()
    run = make_runner(tmp_path, [counter, other])
    assert run.pop_callback(Counter) is counter  # the first of the class
    assert run.pop_callback(counter) is None
    run.remove_callback(other)
    assert not any(isinstance(c, Counter) for c in run.callbacks)
    plots = next(c for c in run.callbacks if isinstance(c, PlotsCallback))
    run.remove_callback(plots)
    assert run.pop_callback(PlotsCallback) is None


def test_without_the_plots_callback_a_run_draws_nothing(tmp_path):
    make_runner(tmp_path / "drawn", progress=False).run()
    run = make_runner(tmp_path / "bare", progress=False)
    run.remove_callback(PlotsCallback)
    run.run()
    assert (tmp_path / "drawn" / LEARNING_CURVE_FILE).exists()
    assert not (tmp_path / "bare" / LEARNING_CURVE_FILE).exists()


def test_the_services_are_no_part_of_what_a_run_records(tmp_path):
    make_runner(tmp_path / "all", [Counter()], progress=False, plots=False).run()
    run = make_runner(tmp_path / "none", [Counter()], progress=False, plots=False)
    for service in (ProgressCallback, FailureStopCallback, PlotsCallback):
        run.remove_callback(service)
    run.run()
    for name in RECORDED:
        assert (tmp_path / "all" / name).read_bytes() == (tmp_path / "none" / name).read_bytes()


class Loud(Callback):
    """Raises when the third session is recorded."""

    def on_session_recorded(self, run, state, control, **kwargs):
        if state.tasks_done == 3:
            raise ZeroDivisionError("no room")


def test_a_users_run_event_that_raises_stops_the_run_in_one_line(tmp_path):
    run = make_runner(tmp_path / "run", [Loud()], progress=False)
    with pytest.raises(CallbackError) as raised:
        run.run()
    message = str(raised.value)
    assert message.startswith(
        "callback tests.run.test_default_callbacks.Loud: on_session_recorded raised "
        "ZeroDivisionError: no room (traceback in "
    )
    assert "\n" not in message
    log = (tmp_path / "run" / RUN_LOG).read_text()
    assert "ZeroDivisionError: no room" in log and "Traceback" in log
    assert len(run.history) == 3


class SeesRecorded(Callback):
    """Writes down what the state says as each session is recorded."""

    def __init__(self):
        self.seen: list[tuple] = []

    def on_session_recorded(self, run, state, control, *, session, **kwargs):
        self.seen.append((state.current_task, state.probing, session.task_index))


def test_after_a_probe_point_the_state_is_the_recorded_sessions_again(tmp_path):
    lines = (SHIPPED_DB.read_text(encoding="utf-8")).splitlines()
    probe_file = tmp_path / "probes.jsonl"
    probe_file.write_text("\n".join(lines[:2]) + "\n", encoding="utf-8")
    env = gym.make("LifelongDB-v0", backend="sqlite")
    probes = Probes(gym.make("LifelongDB-v0", tasks=str(probe_file), backend="sqlite"), every=2)
    seen = SeesRecorded()
    run = Runner(
        env,
        OracleAgent(env.unwrapped.tasks),
        [seen],
        output=tmp_path / "run",
        max_tasks=4,
        progress=False,
        plots=False,
        probes=probes,
    )
    run.run()
    probes.close()
    assert len(probes.records) == 3 * 2  # points 0, 2 and 4, played before SeesRecorded
    assert seen.seen == [(s.task_index, False, s.task_index) for s in run.history]
