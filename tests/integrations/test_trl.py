"""TRL's `GRPOTrainer(environment_factory=...)` on the DB environment, with the tiny model."""

from __future__ import annotations

import json
import math
from pathlib import Path

import gymnasium as gym
import pytest

from lifelong_gym.agents import OracleAgent
from lifelong_gym.errors import EnvArgumentError, RolloutConfigError
from lifelong_gym.session import Role, SessionStatus
from lifelong_gym.tool_calls import parse_tool_call

trl = pytest.importorskip(
    "trl", reason="the TRL adapter needs trl: pip install 'lifelong-gym[trl]'"
)

from lifelong_gym.integrations.trl import (  # noqa: E402
    ENDED,
    environment_factories,
    environment_factory,
    task_dataset,
)


def test_the_tools_are_the_environments():
    tools = environment_factory("LifelongDB-v0")()
    env = gym.make("LifelongDB-v0", action_format="tools")
    from transformers.utils import get_json_schema

    schemas = {s["function"]["name"]: s["function"] for s in env.unwrapped.tools}
    for name, schema in schemas.items():
        derived = get_json_schema(getattr(tools, name))["function"]
        assert derived["parameters"]["properties"] == schema["parameters"]["properties"]
        assert derived["description"] == schema["description"]
    env.close()


def play_oracle(tools, oracle: OracleAgent, index: int, *, wrong: bool = False) -> float:
    """One task through the tool methods, as TRL's loop calls them; the reward TRL reads."""
    prompt = tools.reset(task_index=index, prompt=[{"role": "user", "content": ""}])
    names = [schema["function"]["name"] for schema in tools.tool_schemas]
    assert all(name in prompt for name in names)
    while not tools.session.finished:
        call = parse_tool_call(oracle.act(tools.session))
        if wrong and call.name == "commit_final_answer":
            call.arguments["answer"] = "certainly not the answer"
        tools_method = getattr(tools, call.name)
        tools_method(**call.arguments)
    assert getattr(tools, names[0])(**dict.fromkeys(_parameters(tools, names[0]), "x")) == ENDED
    return tools.get_reward()


def _parameters(tools, name: str) -> list[str]:
    schema = next(s for s in tools.tool_schemas if s["function"]["name"] == name)
    return list(schema["function"]["parameters"]["properties"])


def test_rewards_are_the_environments_own():
    tools = environment_factory("LifelongDB-v0", max_turns=8)()
    oracle = OracleAgent(tools._env.unwrapped.tasks, "tools")
    indices = tools._env.unwrapped.tasks.indices[:6]
    assert [play_oracle(tools, oracle, i) for i in indices] == [1.0] * 6
    assert [play_oracle(tools, oracle, i, wrong=True) for i in indices[:3]] == [0.0] * 3
    # a model that stops without calling the tool that ends the task
    tools.reset(task_index=indices[0])
    assert tools.get_reward() == 0.0
    assert tools.session.status == SessionStatus.AGENT_VALIDATION_FAILED


def test_a_call_with_wrong_arguments_is_judged_by_the_environment():
    tools = environment_factory("LifelongDB-v0")()
    tools.reset(task_index=tools._env.unwrapped.tasks.indices[0])
    observation = tools.execute_sql(query="SELECT 1")
    assert "`execute_sql` takes sql; got query" in observation
    assert tools.session.status == SessionStatus.AGENT_VALIDATION_FAILED
    assert tools.get_reward() == 0.0


def test_the_task_dataset_is_every_task_in_a_seeded_order():
    factory = environment_factory("LifelongDB-v0")
    instance = factory()
    indices = instance.task_indices
    instance._close()
    dataset = task_dataset(factory, seed=3)
    assert dataset.column_names == ["prompt", "task_index"]
    assert sorted(dataset["task_index"]) == indices != dataset["task_index"]
    assert task_dataset("LifelongDB-v0", seed=3)[:] == dataset[:]
    assert task_dataset(factory, seed=4)["task_index"] != dataset["task_index"]
    drawn = task_dataset(factory, num_tasks=5, seed=3)["task_index"]
    assert len(set(drawn)) == 5 and set(drawn) <= set(indices)
    assert task_dataset(factory, num_tasks=5, seed=3)["task_index"] == drawn
    with pytest.raises(EnvArgumentError, match="num_tasks=0"):
        task_dataset(factory, num_tasks=0)


def grpo_args(output: Path, *, batch: int, steps: int = 2, accumulation: int = 1):
    """GRPO's settings for `steps` steps of `batch` episodes (groups of 2) on the CPU."""
    return trl.GRPOConfig(
        output_dir=str(output),
        max_steps=steps,
        per_device_train_batch_size=batch,
        gradient_accumulation_steps=accumulation,
        num_generations=2,
        max_completion_length=12,
        max_tool_calling_iterations=2,
        logging_steps=1,
        report_to=[],
        use_cpu=True,
        bf16=False,
        seed=0,
        temperature=1.0,
    )


def tiny_trainer(tiny_model_dir: Path, args, **trainer_kwargs):
    """TRL's `GRPOTrainer` on the tiny random model, with a template TRL parses tool calls of."""
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl.chat_template_utils import qwen2_5_chat_template

    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    tokenizer.chat_template = qwen2_5_chat_template
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    return trl.GRPOTrainer(model=model, processing_class=tokenizer, args=args, **trainer_kwargs)


def test_grpo_trainer_logs_the_environments_rewards(tiny_model_dir: Path, tmp_path: Path):
    rewards: list[tuple[int, float, list[str]]] = []  # per episode: task, reward, replies

    class Recorded(environment_factory("LifelongDB-v0", max_turns=3)):
        def get_reward(self) -> float:
            reward = super().get_reward()
            replies = [m.content for m in self.session.chat_history if m.role == Role.AGENT]
            rewards.append((self.session.task_index, reward, replies))
            return reward

    trainer = tiny_trainer(
        tiny_model_dir,
        grpo_args(tmp_path, batch=4),
        train_dataset=task_dataset(Recorded),
        environment_factory=Recorded,
    )
    trainer.train()

    logged = [entry for entry in trainer.state.log_history if "rewards/Recorded/mean" in entry]
    assert len(logged) == 2 and len(rewards) == 8
    for step, entry in enumerate(logged):
        episode_rewards = [reward for _, reward, _ in rewards[4 * step : 4 * step + 4]]
        assert math.isclose(entry["rewards/Recorded/mean"], sum(episode_rewards) / 4)
    # the rewards are what the environment gives the same replies on a fresh start
    env = gym.make("LifelongDB-v0", action_format="tools", max_turns=3)
    for index, reward, replies in rewards:
        env.reset(options={"task_index": index})
        for reply in replies:
            env.step(reply)
        if not env.unwrapped.session.finished:
            env.unwrapped.end_task(SessionStatus.AGENT_VALIDATION_FAILED)
        assert env.unwrapped.session.reward == reward
    env.close()
    json.dumps(trainer.state.log_history)  # the logs hold plain numbers


def played_tasks(tiny_model_dir: Path, output: Path, *, batch: int, accumulation: int):
    """The task of every rollout of one GRPO step (4 rollouts, groups of 2), in TRL's order."""
    played: list[int] = []

    class Recorded(environment_factory("LifelongDB-v0", max_turns=2)):
        def reset(self, **row) -> str:
            prompt = super().reset(**row)
            played.append(self.session.task_index)
            return prompt

    args = grpo_args(output, batch=batch, steps=1, accumulation=accumulation)
    trainer = tiny_trainer(
        tiny_model_dir, args, train_dataset=task_dataset(Recorded), environment_factory=Recorded
    )
    trainer.train()
    return played


def test_each_grpo_group_plays_one_task_and_a_seed_repeats_them(
    tiny_model_dir: Path, tmp_path: Path
):
    played = played_tasks(tiny_model_dir, tmp_path / "a", batch=4, accumulation=1)
    assert len(played) == 4
    assert played[0] == played[1] != played[2] == played[3]
    # the same seeds, one generation of 4 rollouts over two accumulated steps of 2
    assert played_tasks(tiny_model_dir, tmp_path / "b", batch=2, accumulation=2) == played


@pytest.mark.parametrize("form", ["no dataset", "mapping without task_index"])
def test_rows_that_name_no_task_are_refused(form: str, tiny_model_dir: Path, tmp_path: Path):
    from datasets import Dataset

    if form == "no dataset":  # TRL's placeholder rows: each rollout would draw its own task
        trainer_kwargs = {"environment_factory": environment_factory("LifelongDB-v0")}
    else:
        rows = [{"environment": "LifelongDB-v0"}] * 2
        trainer_kwargs = {
            "environment_factory": environment_factories(["LifelongDB-v0"]),
            "train_dataset": Dataset.from_list(rows),
        }
    trainer = tiny_trainer(tiny_model_dir, grpo_args(tmp_path, batch=4, steps=1), **trainer_kwargs)
    with pytest.raises(RolloutConfigError, match=r"without task_index.*task_dataset\(") as error:
        trainer.train()
    assert "\n" not in str(error.value)
