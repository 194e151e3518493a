"""`LifelongAgentLoop` inside verl's own agent-loop classes, on the tiny model's tokenizer.

verl's rollout server (vLLM or SGLang) needs a GPU, so the loop is given two servers with
verl's `generate` signature: one that answers with the oracle's reply as tokens (what a
model that solves the task would generate), and the tiny model itself.
"""

from __future__ import annotations

import asyncio

import gymnasium as gym
import pytest

pytest.importorskip("verl", reason="the verl agent loop needs the verl extra")

from omegaconf import OmegaConf  # noqa: E402
from transformers import AutoTokenizer  # noqa: E402
from verl.experimental.agent_loop.agent_loop import (  # noqa: E402
    AgentLoopOutput,
    DictConfigWrap,
    _agent_loop_registry,
)
from verl.utils.dataset.rl_dataset import RLHFDataset  # noqa: E402
from verl.workers.rollout.replica import TokenOutput  # noqa: E402

from lifelong_gym.decoding.chat_tokens import EpisodeTokenizer  # noqa: E402
from lifelong_gym.integrations.verl import LifelongAgentLoop, dataset_row  # noqa: E402
from lifelong_gym.session import Role, Session  # noqa: E402

from ..test_examples import run as run_example  # noqa: E402


class OracleServer:
    """verl's `generate`: the oracle's next reply as tokens, read from the prompt it is sent.

    The last observation is recovered from the tokens the loop appended since the last
    reply, exactly as a model would read it.
    """

    def __init__(self, task, tokenizer, action_format: str = "text"):
        self.task, self.tokenizer, self.action_format = task, tokenizer, action_format
        self.turns = EpisodeTokenizer(tokenizer).turns
        self.session = Session(task_index=task.index)
        self.seen = 0
        self.generated: list[list[int]] = []
        self.logprobs = True

    async def generate(self, request_id, *, prompt_ids, sampling_params, **kwargs):
        if self.seen:
            text = self.tokenizer.decode(prompt_ids[self.seen :])
            observation = text.split(self.turns.user_open, 1)[1]
            self.session.add(Role.USER, observation.rsplit(self.turns.user_close, 1)[0])
        else:
            self.session.add(Role.USER, "the task")
        reply = self.task.oracle_reply(self.session.chat_history, self.action_format)
        self.session.add(Role.AGENT, reply)
        ids = self.tokenizer.encode(reply, add_special_tokens=False)
        ids.append(self.tokenizer.eos_token_id)
        self.seen = len(prompt_ids) + len(ids)
        self.generated.append(ids)
        logprobs = [-0.5] * len(ids) if self.logprobs else None
        return TokenOutput(token_ids=ids, log_probs=logprobs, stop_reason="completed")


class PolicyServer:
    """verl's `generate` answered by a real model (the tiny one), with its logprobs."""

    def __init__(self, policy):
        self.policy = policy

    async def generate(self, request_id, *, prompt_ids, sampling_params, **kwargs):
        (reply,) = self.policy.generate([prompt_ids])
        return TokenOutput(token_ids=reply.token_ids, log_probs=reply.logprobs)


@pytest.fixture(scope="module")
def tokenizer(tiny_model_dir):
    return AutoTokenizer.from_pretrained(tiny_model_dir)


@pytest.fixture(scope="module")
def db_tasks():
    env = gym.make("LifelongDB-v0")
    yield env.unwrapped.tasks
    env.close()


def agent_loop(server, tokenizer, response_length: int = 4096) -> LifelongAgentLoop:
    """The loop as verl's worker builds it (hydra passes these keyword arguments)."""
    config = OmegaConf.create(
        {
            "actor_rollout_ref": {
                "rollout": {"prompt_length": 4096, "response_length": response_length}
            },
            "data": {},
        }
    )
    return LifelongAgentLoop(
        trainer_config=DictConfigWrap(config),
        server_manager=server,
        tokenizer=tokenizer,
        processor=None,
        dataset_cls=RLHFDataset,
        data_config=DictConfigWrap(config.data),
    )


def run(loop: LifelongAgentLoop, task_index: int, **env_kwargs) -> AgentLoopOutput:
    row = dataset_row("LifelongDB-v0", task_index, **env_kwargs)
    return asyncio.run(
        loop.run({"temperature": 1.0}, raw_prompt=row["prompt"], extra_info=row["extra_info"])
    )


def where(values: list, mask: list[int], bit: int) -> list:
    """The values at the positions where the mask is `bit`."""
    return [v for v, m in zip(values, mask, strict=True) if m == bit]


def test_the_loop_is_registered_with_verl():
    assert _agent_loop_registry["lifelong_gym"] == {
        "_target_": "lifelong_gym.integrations.verl.LifelongAgentLoop"
    }


@pytest.mark.parametrize("action_format", ["text", "tools"])
def test_oracle_replies_score_one_and_the_mask_marks_exactly_the_generated_tokens(
    tokenizer, db_tasks, action_format
):
    for task_index in db_tasks.indices[:3]:
        task = db_tasks[task_index]
        server = OracleServer(task, tokenizer, action_format)
        output = run(agent_loop(server, tokenizer), task_index, action_format=action_format)
        assert isinstance(output, AgentLoopOutput)
        assert output.reward_score == 1.0
        assert output.extra_fields["status"] == "completed"
        generated = where(output.response_ids, output.response_mask, 1)
        assert generated == [t for ids in server.generated for t in ids]
        assert len(output.response_logprobs) == len(output.response_ids)
        assert set(where(output.response_logprobs, output.response_mask, 1)) == {-0.5}
        assert set(where(output.response_logprobs, output.response_mask, 0)) == {0}
        batch = output.as_dict()  # verl's own conversion to tensors
        assert batch["responses"].shape == batch["response_mask"].shape
        assert float(batch["rm_scores"][-1]) == 1.0


def test_a_full_response_budget_ends_the_task_at_the_limit(tokenizer, db_tasks):
    task_index = db_tasks.indices[0]
    output = run(
        agent_loop(OracleServer(db_tasks[task_index], tokenizer), tokenizer, 40), task_index
    )
    assert output.extra_fields["status"] == "task_limit_reached"
    assert output.reward_score == 0.0
    assert len(output.response_ids) == len(output.response_mask) == 40


def test_a_server_without_logprobs_leaves_them_to_verl(tokenizer, db_tasks):
    task_index = db_tasks.indices[0]
    server = OracleServer(db_tasks[task_index], tokenizer)
    server.logprobs = False
    output = run(agent_loop(server, tokenizer), task_index)
    assert output.reward_score == 1.0 and output.response_logprobs is None
    assert output.num_turns == 4  # prompt, SQL, its result, answer


def test_a_real_model_gets_its_logprobs_and_the_environment_reward(tiny_model_dir, db_tasks):
    from lifelong_gym.training import TransformersPolicy

    policy = TransformersPolicy(tiny_model_dir, max_new_tokens=16, temperature=1.0, seed=0)
    output = run(agent_loop(PolicyServer(policy), policy.tokenizer), db_tasks.indices[0])
    assert output.reward_score == 0.0  # random weights never solve a task
    assert output.extra_fields["status"] == "agent_validation_failed"
    generated = where(output.response_logprobs, output.response_mask, 1)
    assert len(generated) == sum(output.response_mask) >= 1
    assert all(p < 0 for p in generated)


def test_a_row_without_an_environment_is_a_clear_error(tokenizer):
    from lifelong_gym.errors import RolloutConfigError

    loop = agent_loop(None, tokenizer)
    with pytest.raises(RolloutConfigError, match="dataset_row"):
        asyncio.run(loop.run({}, raw_prompt=[], extra_info={}))


def test_the_example_writes_rows_that_name_their_episodes(tmp_path):
    import pyarrow.parquet as pq

    from lifelong_gym.integrations.verl import _episode_spec

    run_example(
        "verl_dataset.py", "--output", str(tmp_path), "--tasks", "3", "--action-format", "tools"
    )
    rows = pq.read_table(tmp_path / "train.parquet").to_pylist()
    assert [r["agent_name"] for r in rows] == ["lifelong_gym"] * 3
    assert _episode_spec(rows[2]["extra_info"]) == {
        "env_id": "LifelongDB-v0",
        "env_kwargs": {"action_format": "tools"},
        "task_index": 2,
    }
    assert "LifelongAgentLoop" in (tmp_path / "agent_loops.yaml").read_text()
