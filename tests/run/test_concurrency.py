"""Many sessions of one lifelong run in flight: order, what callbacks see, batching, faults."""

from __future__ import annotations

import json
import re
import time

import gymnasium as gym
import pytest

from lifelong_gym.agents import AgentError, LanguageModelAgent, OpenAIModelConfig, create_model
from lifelong_gym.errors import RunConfigError, RunDirectoryError
from lifelong_gym.run import EVENTS, Callback, Runner
from lifelong_gym.session import SessionStatus
from tests.agents.chat_server import ChatServer
from tests.arithmetic_env import PatternAgent, SumEnv, sum_tasks
from tests.run.every_path import GOLDEN, TASKS, TroubledEnv, run_every_path

RUN_FILES = ("sessions.jsonl", "metrics.json", "state.json", "config.json")


def sessions_of(folder):
    return [json.loads(line) for line in (folder / "sessions.jsonl").read_text().splitlines()]


def troubled_env():
    return TroubledEnv(sum_tasks(TASKS))


@pytest.mark.parametrize("options", [{}, {"concurrency": 1}])
def test_one_at_a_time_writes_what_the_runner_wrote_before_byte_for_byte(tmp_path, options):
    run_every_path(tmp_path / "run", **options)
    for name in RUN_FILES:
        assert (tmp_path / "run" / name).read_bytes() == (GOLDEN / name).read_bytes(), name


def test_four_in_flight_is_reproducible_and_changes_only_what_callbacks_saw(tmp_path):
    for name in ("a", "b"):
        run_every_path(tmp_path / name, concurrency=4, make_env=troubled_env)
    for name in ("sessions.jsonl", "metrics.json", "state.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert json.loads((tmp_path / "a" / "config.json").read_text())["concurrency"] == 4
    golden, ran = sessions_of(GOLDEN), sessions_of(tmp_path / "a")
    assert [s["task_index"] for s in ran] == [s["task_index"] for s in golden]
    for position, (one, four) in enumerate(zip(golden, ran, strict=True)):
        # each task sees the sessions of tasks 0..t-K, so 3 fewer than one at a time
        if "history_seen" in one["details"]:  # not in the session that could not start
            assert one["details"].pop("history_seen")[0] == position
            assert four["details"].pop("history_seen")[0] == max(0, position - 3)
        one.pop("state_changed", None), four.pop("state_changed", None)
        assert four == one  # every fault and every callback's steering, as before


class Visibility(Callback):
    """Writes down, for every event, the task and which finished sessions it was shown."""

    def __init__(self):
        self.log: list[tuple[str, int, list[int]]] = []

    def __getattribute__(self, name):
        if name in EVENTS and name != "restore_state":

            def handler(run, state, control, *, session, history, **kwargs):
                self.log.append((name, session.task_index, [s.task_index for s in history]))

            return handler
        return super().__getattribute__(name)


@pytest.mark.parametrize("concurrency", [1, 3, 5])
def test_callbacks_see_exactly_the_sessions_of_tasks_before_t_minus_k_plus_one(
    tmp_path, concurrency
):
    seen = Visibility()
    env = SumEnv(sum_tasks(20))
    stream = list(env.tasks.order)
    runner = Runner(
        env,
        PatternAgent(env.tasks, wrong={4}),
        [seen],
        output=tmp_path / "run",
        progress=False,
        concurrency=concurrency,
        make_env=lambda: SumEnv(sum_tasks(20)),
    )
    metrics = runner.run()
    assert metrics.sessions == 20 and metrics.correct == 19
    assert [s.task_index for s in runner.history] == stream
    created, saved = [], []
    for event, task_index, history in seen.log:
        position = stream.index(task_index)
        assert history == stream[: max(0, position - concurrency + 1)], (event, task_index)
        if event == "on_session_create":
            # task t starts only after task t-K has finished (its last event came first)
            assert position < concurrency or stream[position - concurrency] in saved
            assert len(created) - len(saved) < concurrency  # at most K in flight
            created.append(task_index)
        if event == "on_state_save":
            saved.append(task_index)
    assert created == saved == stream  # started and completed in the stream's order
    per_task = {}
    for event, task_index, _ in seen.log:
        per_task.setdefault(task_index, []).append(event)
    for events in per_task.values():
        assert events[:2] == ["on_session_create", "on_environment_reset"]
        assert events[-2:] == ["on_environment_complete", "on_state_save"]


class BatchRecorder(PatternAgent):
    """Records the size of every batch; refuses any batch holding task 6 (as a model whose
    context one history overflows refuses the whole batch)."""

    def __init__(self, tasks):
        super().__init__(tasks, fail={6}, error=AgentError)
        self.batches: list[int] = []

    def act_batch(self, sessions):
        self.batches.append(len(sessions))
        if any(s.task_index == 6 for s in sessions):
            raise AgentError("the batch does not fit")
        return super().act_batch(sessions)


def test_the_agent_is_asked_once_per_turn_and_a_failing_batch_fails_one_session(tmp_path):
    env = SumEnv(sum_tasks(16))
    agent = BatchRecorder(env.tasks)
    runner = Runner(
        env,
        agent,
        [],
        output=None,
        progress=False,
        concurrency=4,
        make_env=lambda: SumEnv(sum_tasks(16)),
    )
    runner.run()
    assert max(agent.batches) == 4
    assert len(agent.batches) < 16  # 16 tasks of 2 turns each, in far fewer calls
    statuses = {s.task_index: s.status for s in runner.history}
    assert statuses.pop(6) == SessionStatus.AGENT_UNKNOWN_ERROR
    assert set(statuses.values()) == {SessionStatus.COMPLETED}
    assert all(s.outcome.value == "correct" for s in runner.history if s.task_index != 6)


def test_a_served_model_gets_the_turns_of_all_sessions_in_flight_at_once(tmp_path):
    server = ChatServer()
    server.default = sum_reply
    try:
        config = OpenAIModelConfig(
            name="m", base_url=server.base_url, model="m", concurrency=8, check_server=False
        )
        model = create_model(config)
        env = SumEnv(sum_tasks(12))
        runner = Runner(
            env,
            LanguageModelAgent(model),
            [],
            output=tmp_path / "run",
            progress=False,
            concurrency=4,
            make_env=lambda: SumEnv(sum_tasks(12)),
        )
        metrics = runner.run()
        model.close()
    finally:
        server.close()
    assert metrics.correct == 12
    assert server.most_in_flight == 4


def sum_reply(request):
    """What a model that can add would answer to the arithmetic environment's prompt."""
    time.sleep(0.05)  # long enough for the turn's other requests to arrive
    a, b = map(int, re.findall(r"What is (\d+) \+ (\d+)", request["messages"][0]["content"])[0])
    return f"Action: Answer {a + b}"


def test_concurrency_needs_a_way_to_make_more_environments():
    env = SumEnv()
    with pytest.raises(RunConfigError, match="pass make_env"):
        Runner(env, PatternAgent(env.tasks), progress=False, concurrency=2).run()
    with pytest.raises(RunConfigError, match="concurrency: .*greater than or equal to 1"):
        Runner(env, PatternAgent(env.tasks), concurrency=0)


class ClosingSumEnv(SumEnv):
    """Counts the environments closed."""

    closed = 0

    def close(self):
        ClosingSumEnv.closed += 1
        super().close()


def test_further_environments_are_made_from_the_spec_and_closed():
    used = []

    class Envs(Callback):
        def on_environment_reset(
            self, run, state, control, *, agent, env, session, history, **kwargs
        ):
            used.append(env)

    gym.register("LifelongClosingSum-v0", entry_point=f"{__name__}:ClosingSumEnv")
    try:
        env = gym.make("LifelongClosingSum-v0", max_turns=2)
        tasks = env.unwrapped.tasks
        runner = Runner(env, PatternAgent(tasks), [Envs()], progress=False, concurrency=3)
        assert runner.run().correct == 12
    finally:
        del gym.registry["LifelongClosingSum-v0"]
    others = {id(e): e for e in used if e is not env}
    assert len(others) == 2 and all(e.unwrapped.max_turns == 2 for e in others.values())
    assert ClosingSumEnv.closed == 2  # the runner closes what it made, not the caller's env


def test_a_run_is_resumed_with_its_own_concurrency(tmp_path):
    def runner(concurrency, max_tasks=None):
        env = SumEnv()
        return Runner(
            env, PatternAgent(env.tasks), [], output=tmp_path / "run", max_tasks=max_tasks,
            progress=False, concurrency=concurrency, make_env=SumEnv,
        )  # fmt: skip

    runner(3, max_tasks=5).run()
    with pytest.raises(RunDirectoryError, match="concurrency: 3 -> 2"):
        runner(2).run()
    assert runner(3).run().sessions == 12
