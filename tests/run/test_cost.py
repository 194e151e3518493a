"""Cost per task: what the runner records for each session, its sums, prices and old folders."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import gymnasium as gym
import pytest
from click.testing import CliRunner

import lifelong_gym  # noqa: F401 - registers the ids
from lifelong_gym.agents import LanguageModelAgent, ModelPool, OracleAgent, to_messages
from lifelong_gym.cli import main
from lifelong_gym.errors import RunConfigError
from lifelong_gym.results.cost_summary import format_cost
from lifelong_gym.results.costs import CostLog, parse_price, read_costs
from lifelong_gym.results.run_record import load_run
from lifelong_gym.run import ExperienceReplayCallback, Runner

from ..methods.test_methods_end_to_end import OracleThroughModel
from .test_old_run_folders import OLD_RUN

TASKS = 5


@pytest.fixture(scope="module")
def tiny(tiny_model_dir: Path):
    config = {"name": "tiny", "backend": "hf", "path": str(tiny_model_dir), "max_new_tokens": 4}
    return ModelPool([config]).get("tiny")


def run(folder: Path, agent_of, callbacks=(), **options) -> Runner:
    env = gym.make("LifelongDB-v0")
    try:
        runner = Runner(
            env, agent_of(env), list(callbacks), output=folder, max_tasks=TASKS, progress=False,
            plots=False, **options,
        )  # fmt: skip
        runner.run()
    finally:
        env.close()
    return runner


def prompt_tokens_of(model, session) -> int:
    """The prompt tokens of every agent turn of a session, counted apart from the back-end."""
    messages = to_messages(session.chat_history)
    turns = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
    ids = (
        model.tokenizer.apply_chat_template(messages[:turn], add_generation_prompt=True)
        for turn in turns
    )
    return sum(len(i["input_ids"] if hasattr(i, "keys") else i) for i in ids)


def test_each_task_costs_what_the_model_counted_and_replay_adds_its_memory(tmp_path, tiny):
    def agent(env):
        return OracleThroughModel(env.unwrapped.tasks, tiny)

    mark = tiny.usage.mark()
    replay = run(tmp_path / "replay", agent, [ExperienceReplayCallback(n=2)])
    logged = tiny.usage.since(mark)
    plain = run(tmp_path / "plain", agent)
    costs = read_costs(tmp_path / "replay" / "costs.jsonl")
    assert [c.position for c in costs] == list(range(TASKS))
    assert [c.task_index for c in costs] == [s.task_index for s in replay.history]
    assert sum(c.agent.calls for c in costs) == len(logged)
    assert sum(c.agent.generated_tokens for c in costs) == sum(u.generated_tokens for u in logged)
    for cost, session, alone in zip(costs, replay.history, plain.history, strict=True):
        assert cost.agent.calls == session.agent_turns
        assert cost.agent.prompt_tokens == prompt_tokens_of(tiny, session)
        assert cost.methods.calls == cost.methods.prompt_tokens == 0  # replay calls no model
        # the memory: the replayed opening's tokens beyond the plain run's opening of the task
        opening, plain_opening = session.chat_history[0].content, alone.chat_history[0].content
        added = tiny.count_tokens([{"role": "user", "content": opening}]) - tiny.count_tokens(
            [{"role": "user", "content": plain_opening}]
        )
        assert (cost.memory, cost.memory_unit) == (added, "tokens")
        assert cost.wall_seconds > 0
    assert costs[0].memory == 0 and costs[-1].memory > 0
    summary = replay.cost()
    assert summary.memory_prompt_tokens == sum(c.memory * c.agent.calls for c in costs)
    assert summary.memory_share == summary.memory_prompt_tokens / summary.agent.prompt_tokens
    assert 0 < summary.memory_share < 1
    saved = json.loads((tmp_path / "replay" / "cost.json").read_text())
    assert saved["agent"]["prompt_tokens"] == sum(c.agent.prompt_tokens for c in costs)


def test_tasks_in_one_batch_are_each_charged_their_own_reply(tmp_path, tiny):
    runner = run(tmp_path / "run", lambda env: LanguageModelAgent(tiny), concurrency=3)
    costs = read_costs(tmp_path / "run" / "costs.jsonl")
    assert [c.agent.calls for c in costs] == [s.agent_turns for s in runner.history]
    assert [c.agent.prompt_tokens for c in costs] == [
        prompt_tokens_of(tiny, s) for s in runner.history
    ]


def test_an_agent_without_a_model_makes_no_call_of_unknown_tokens(tmp_path):
    runner = run(tmp_path / "run", lambda env: OracleAgent(env.unwrapped.tasks))
    summary = runner.cost()
    assert (summary.costed, summary.agent.calls, summary.methods.calls) == (TASKS, 0, 0)
    assert summary.prompt_tokens is None and summary.generated_tokens is None
    assert summary.memory_unit == "characters" and summary.dollars is None
    assert "prompt tokens" in format_cost(summary) and "unknown" in format_cost(summary)


def test_price_per_million_tokens():
    price = parse_price("0.15,0.60")
    assert price.dollars(2_000_000, 500_000) == pytest.approx(0.15 * 2 + 0.60 * 0.5)
    assert parse_price("3").dollars(1_000_000, 1_000_000) == pytest.approx(6.0)
    for bad in ("", "x", "1,2,3", "-1", "1,", "nan", "inf,1"):
        with pytest.raises(RunConfigError, match="--price-per-mtok"):
            parse_price(bad)


def test_a_priced_run_and_a_bad_price_on_the_command_line(tmp_path):
    out = tmp_path / "run"
    args = ["run", "--output", str(out), "--max-tasks", "3", "--no-progress"]
    result = CliRunner().invoke(main, [*args, "--price-per-mtok", "1,x"])
    assert result.exit_code == 1
    assert result.output.count("\n") == 1 and result.output.startswith("Error: --price-per-mtok")
    assert not out.exists()
    result = CliRunner().invoke(main, [*args, "--price-per-mtok", "0.5,2"])
    assert result.exit_code == 0, result.output
    saved = json.loads((out / "cost.json").read_text())
    assert saved["price"] == {"prompt": 0.5, "generated": 2.0}
    report = CliRunner().invoke(main, ["report", str(out)])
    assert "at $0.5 / $2 per million prompt / generated tokens" in report.output
    assert "dollars" in report.output  # unknown for the oracle: it has no tokens


def test_costs_written_before_a_kill_are_kept_only_for_recorded_sessions(tmp_path):
    runner = run(tmp_path / "run", lambda env: OracleAgent(env.unwrapped.tasks))
    log = CostLog(tmp_path / "run")
    whole = log.path.read_bytes()
    log.path.write_bytes(whole + b'{"position": 5, "task_')  # a line torn by a kill
    costs = log.resume(runner.history[:3])  # the last two sessions' lines were not written
    assert [c.position for c in costs] == [0, 1, 2]
    assert log.path.read_bytes() == b"".join(whole.splitlines(keepends=True)[:3])


def test_an_old_run_folder_loads_and_resumes_with_costs_for_its_new_sessions(tmp_path):
    folder = tmp_path / "run"
    shutil.copytree(OLD_RUN, folder)
    old = load_run(folder)
    assert old.cost.costed == 0 and old.cost.sessions == 6
    assert format_cost(old.cost) == "cost: not recorded for these 6 sessions (an older run)"
    args = ["run", "--agent", "oracle", "--output", str(folder), "--max-tasks", "8"]
    args += ["--callback", "experience_replay:n=2", "--no-progress"]
    for tasks in ("8", "9"):  # resumed twice: the second keeps the first's costs
        args[args.index("--max-tasks") + 1] = tasks
        assert CliRunner().invoke(main, args).exit_code == 0
    costs = read_costs(folder / "costs.jsonl")
    assert [c.position for c in costs] == [6, 7, 8]
    assert load_run(folder).cost.costed == 3
    result = CliRunner().invoke(main, ["report", str(folder)])
    assert result.exit_code == 0 and "cost over 3 tasks (6 sessions without a cost" in result.output
