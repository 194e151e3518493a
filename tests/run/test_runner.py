"""The runner on a small real lifelong environment: events, failures, snapshots, resume."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

from lifelong_gym.agents import AgentContextLimitError
from lifelong_gym.errors import RunAbortedError
from lifelong_gym.results.folder import RunDirectory, RunDirectoryError
from lifelong_gym.run import EVENTS, Callback, Runner, SessionControl
from lifelong_gym.session import EvaluationOutcome, SessionStatus
from lifelong_gym.wrappers import LifelongTaskSequence
from tests.arithmetic_env import DownAgent, PatternAgent, SumEnv


class Recorder(Callback):
    """Writes down every event it sees, with the session's task index."""

    def __init__(self):
        self.events: list[tuple[str, int | None]] = []

    def __getattribute__(self, name):
        if name in EVENTS:

            def handler(run, state, control, *, session, **kwargs):
                self.events.append((name, session.task_index if session else None))

            return handler
        return super().__getattribute__(name)


class Counter(Callback):
    """A stateful callback: counts the sessions it saw finish correct."""

    state_attributes = ("correct", "seen")

    def __init__(self):
        self.correct: list[int] = []
        self.seen = 0
        self.restored = 0

    def on_environment_complete(
        self, run, state, control, *, agent, env, session, history, **kwargs
    ):
        self.seen += 1
        if session.outcome == EvaluationOutcome.CORRECT:
            self.correct.append(session.task_index)

    def restore_state(self, run, state, control, *, agent, env, session, history, **kwargs):
        self.restored += 1


class Raiser(Callback):
    """Raises in one event, for one task."""

    def __init__(self, event: str, task_index: int):
        self.event, self.task_index = event, task_index

    def __getattribute__(self, name):
        if name in EVENTS and name == super().__getattribute__("event"):

            def handler(run, state, control, *, session, **kwargs):
                if session is not None and session.task_index == self.task_index:
                    raise ValueError(f"broken in {name}")

            return handler
        return super().__getattribute__(name)


def make_runner(tmp_path, agent=None, callbacks=(), **kwargs):
    env = SumEnv()
    agent = agent or PatternAgent(env.tasks, wrong={3})
    return Runner(env, agent, callbacks, output=tmp_path / "run", progress=False, **kwargs)


def read_lines(tmp_path):
    return [json.loads(line) for line in (tmp_path / "run" / "sessions.jsonl").open()]


def test_runs_the_stream_in_sample_order_and_writes_outputs(tmp_path):
    runner = make_runner(tmp_path)
    metrics = runner.run()
    order = runner.env.unwrapped.tasks.order
    assert [s.task_index for s in runner.history] == order
    lines = read_lines(tmp_path)
    assert [line["task_index"] for line in lines] == order
    assert {"status", "outcome", "skills", "chat_history", "reward", "details"} <= set(lines[0])
    assert metrics.sessions == 12 and metrics.correct == 11
    saved = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert saved["success_rate"] == pytest.approx(11 / 12)
    assert saved["status_counts"] == {"completed": 12}
    assert saved["per_skill"]["large"]["count"] == 4
    assert (tmp_path / "run" / "learning_curve.png").stat().st_size > 0
    assert (tmp_path / "run" / "per_skill.png").stat().st_size > 0
    assert runner.env.unwrapped.started == runner.env.unwrapped.ended == 12
    assert not (tmp_path / "run" / "state.json").exists()  # no callback keeps state


def test_events_fire_in_the_documented_order(tmp_path):
    recorder = Recorder()
    make_runner(tmp_path, callbacks=[recorder], max_tasks=1).run()
    first = 1  # the sample order starts with task 1
    assert recorder.events == [
        ("on_session_create", first),
        ("on_environment_reset", first),
        ("on_agent_inference", first),
        ("on_environment_interact", first),
        ("on_agent_inference", first),
        ("on_environment_interact", first),
        ("on_environment_complete", first),
        ("on_state_save", first),
    ]


def test_agent_failures_become_statuses_and_the_run_goes_on(tmp_path):
    env = SumEnv()
    agents = [
        PatternAgent(env.tasks, fail={5}),
        PatternAgent(env.tasks, fail={5}, error=lambda m: AgentContextLimitError(m)),
    ]
    for agent, status in zip(
        agents, [SessionStatus.AGENT_UNKNOWN_ERROR, SessionStatus.AGENT_CONTEXT_LIMIT], strict=True
    ):
        runner = Runner(SumEnv(), agent, output=None, progress=False)
        metrics = runner.run()
        failed = [s for s in runner.history if s.task_index == 5]
        assert failed[0].status == status and "the model is down" in failed[0].error
        assert metrics.sessions == 12 and metrics.correct == 11
        assert runner.env.unwrapped.started == runner.env.unwrapped.ended


@pytest.mark.parametrize("event", [e for e in EVENTS if e != "restore_state"])
def test_a_failing_callback_marks_its_session_and_the_others_still_run(tmp_path, event):
    recorder = Recorder()
    runner = make_runner(tmp_path, callbacks=[Raiser(event, 7), recorder])
    runner.run()
    by_index = {s.task_index: s for s in runner.history}
    assert by_index[7].status == SessionStatus.TASK_UNKNOWN_ERROR
    assert f"Raiser.{event}: ValueError: broken in {event}" in by_index[7].error
    assert sum(s.status == SessionStatus.TASK_UNKNOWN_ERROR for s in runner.history) == 1
    assert (event, 7) in recorder.events
    assert len(runner.history) == 12
    assert runner.env.unwrapped.started == runner.env.unwrapped.ended


def test_stops_after_consecutive_failures_and_keeps_them(tmp_path):
    runner = make_runner(tmp_path, agent=DownAgent(), max_consecutive_failures=3)
    with pytest.raises(RunAbortedError, match="3 sessions in a row failed"):
        runner.run()
    assert len(read_lines(tmp_path)) == 3
    assert runner.history[-1].status == SessionStatus.AGENT_UNKNOWN_ERROR


def test_resume_skips_done_tasks_and_restores_callback_state(tmp_path):
    counter = Counter()
    make_runner(tmp_path, callbacks=[counter], max_tasks=5).run()
    assert counter.seen == 5 and counter.restored == 0
    env = SumEnv()
    agent = PatternAgent(env.tasks, wrong={3})
    resumed = Counter()
    runner = Runner(env, agent, [resumed], output=tmp_path / "run", progress=False)
    runner.run()
    assert resumed.restored == 1
    assert resumed.seen == 12 and len(resumed.correct) == 11
    assert env.started == 7  # only the tasks not done before
    assert [line["task_index"] for line in read_lines(tmp_path)] == env.tasks.order


def test_resume_drops_a_torn_line_and_a_session_without_its_state(tmp_path):
    make_runner(tmp_path, callbacks=[Counter()], max_tasks=3).run()
    state_after_3 = (tmp_path / "run" / "state.json").read_bytes()
    make_runner(tmp_path, callbacks=[Counter()], max_tasks=4).run()
    # the process died after writing session 4's line but before its state ...
    (tmp_path / "run" / "state.json").write_bytes(state_after_3)
    # ... and a later write was cut short
    path = tmp_path / "run" / "sessions.jsonl"
    path.write_bytes(path.read_bytes() + b'{"task_index": 3, "skil')
    counter = Counter()
    runner = make_runner(tmp_path, callbacks=[counter])
    runner.run()
    indices = [line["task_index"] for line in read_lines(tmp_path)]
    assert indices == runner.env.unwrapped.tasks.order
    assert runner.env.unwrapped.started == 9  # the session without its state ran again
    assert counter.seen == 12 and len(counter.correct) == 11


def test_a_damaged_middle_line_is_an_error(tmp_path):
    make_runner(tmp_path, max_tasks=3).run()
    path = tmp_path / "run" / "sessions.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(lines[0] + b'{"broken": \n' + b"".join(lines[1:]))
    with pytest.raises(RunDirectoryError, match="sessions.jsonl:2 is not a session record"):
        make_runner(tmp_path).run()


def test_a_changed_config_refuses_to_resume_unless_restarted(tmp_path):
    make_runner(tmp_path, max_tasks=3).run()
    with pytest.raises(RunDirectoryError, match=r"order: 'sample' -> 'shuffled'.*--overwrite"):
        make_runner(tmp_path, order="shuffled", seed=1).run()
    runner = make_runner(tmp_path, order="shuffled", seed=1, overwrite=True, max_tasks=2)
    runner.run()
    assert [line["task_index"] for line in read_lines(tmp_path)] == runner.order[:2]
    assert runner.order != runner.env.unwrapped.tasks.order


def test_a_folder_in_use_is_refused(tmp_path):
    holder = RunDirectory(tmp_path / "run")
    try:
        with pytest.raises(RunDirectoryError, match="in use by another run"):
            make_runner(tmp_path).run()
    finally:
        holder.close()


class SkipForever(Callback):
    def on_agent_inference(self, run, state, control, *, agent, env, session, history, **kwargs):
        control.skip_next_interaction = True


class EndAtOnce(Callback):
    def on_environment_reset(self, run, state, control, *, agent, env, session, history, **kwargs):
        return SessionControl(end_session=True)


def test_endless_skipping_ends_the_session_instead_of_hanging(tmp_path):
    runner = make_runner(tmp_path, callbacks=[SkipForever()], max_tasks=2)
    runner.run()
    assert [s.status for s in runner.history] == [SessionStatus.TASK_UNKNOWN_ERROR] * 2
    assert "skipped 10 interactions in a row" in runner.history[0].error
    assert runner.env.unwrapped.started == runner.env.unwrapped.ended == 2


def test_end_session_scores_the_task_as_it_stands(tmp_path):
    runner = make_runner(tmp_path, callbacks=[EndAtOnce()], max_tasks=2)
    metrics = runner.run()
    assert [s.status for s in runner.history] == [SessionStatus.COMPLETED] * 2
    assert [s.outcome for s in runner.history] == [EvaluationOutcome.INCORRECT] * 2
    assert metrics.correct == 0 and runner.agent.calls == 0


def test_in_memory_run_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    env = SumEnv()
    metrics = Runner(env, PatternAgent(env.tasks), progress=False).run()
    assert metrics.success_rate == 1.0
    assert list(tmp_path.iterdir()) == []


class BrokenStart(SumEnv):
    """A back-end that cannot set up task 5."""

    def _start_task(self, task):
        if task.index == 5:
            raise ConnectionError("database went away")
        return super()._start_task(task)


def test_an_environment_that_cannot_start_a_task_is_recorded_and_the_run_goes_on(tmp_path):
    env = BrokenStart()
    runner = Runner(env, PatternAgent(env.tasks), output=tmp_path / "run", progress=False)
    metrics = runner.run()
    failed = next(s for s in runner.history if s.task_index == 5)
    assert failed.status == SessionStatus.TASK_ENVIRONMENT_ERROR
    assert failed.error == "ConnectionError: database went away"
    assert failed.skills == ["small"]
    assert metrics.sessions == 12 and metrics.correct == 11


class CannotRestore(Counter):
    def restore_state(self, run, state, control, *, agent, env, session, history, **kwargs):
        raise KeyError("memory index missing")


def test_a_callback_that_cannot_restore_stops_with_a_clear_error(tmp_path):
    make_runner(tmp_path, callbacks=[CannotRestore()], max_tasks=2).run()
    with pytest.raises(RunAbortedError, match="cannot resume: CannotRestore.restore_state"):
        make_runner(tmp_path, callbacks=[CannotRestore()]).run()


def test_the_runner_drives_a_wrapped_environment(tmp_path):
    env = LifelongTaskSequence(SumEnv())
    runner = Runner(env, PatternAgent(env.unwrapped.tasks, wrong={3}), progress=False)
    metrics = runner.run()
    assert [s.task_index for s in env.sessions] == [s.task_index for s in runner.history]
    assert env.calculate_metric() == metrics


@pytest.fixture
def sum_env_id():
    env_id = "LifelongSumTest-v0"
    gym.register(env_id, entry_point=f"{SumEnv.__module__}:SumEnv")
    yield env_id
    del gym.registry[env_id]


def test_passwords_in_environment_arguments_are_not_saved(tmp_path, sum_env_id):
    env = gym.make(sum_env_id, url="mysql://root:s3cret@db:3306/x")
    runner = Runner(
        env,
        PatternAgent(env.unwrapped.tasks),
        [],
        output=tmp_path / "run",
        max_tasks=1,
        progress=False,
    )
    runner.run()
    saved = (tmp_path / "run" / "config.json").read_text()
    assert "s3cret" not in saved and "mysql://root:***@db:3306/x" in saved
    again = Runner(env, PatternAgent(env.unwrapped.tasks), output=tmp_path / "run", max_tasks=2)
    again.settings = again.settings.model_copy(update={"progress": False})
    again.run()  # the saved config is compared with the password masked on both sides
    assert len(again.history) == 2
