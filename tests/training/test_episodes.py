"""Token episodes: the chat template of the conversation, token for token; exact logprobs."""

from __future__ import annotations

import gymnasium as gym
import pytest
import torch
from gymnasium.vector import AutoresetMode

from lifelong_gym.decoding.chat_tokens import render
from lifelong_gym.training import TokenEpisode, TransformersPolicy, collect_episodes

from .conftest import db_env

POLICIES = ["tiny_policy", "smollm2_policy"]


def multi_turn_episodes(policy: TransformersPolicy, count: int = 3):
    """Episodes of up to 3 turns on two DB copies, and the log of what the copies received."""
    log: list[dict] = []
    envs = gym.vector.SyncVectorEnv(
        [lambda: db_env(log, every_reply_queries=True)] * 2,
        autoreset_mode=AutoresetMode.SAME_STEP,
    )
    episodes = collect_episodes(envs, policy, count, seed=3)
    envs.close()
    return episodes, log


def template_rendering(policy: TransformersPolicy, episode: TokenEpisode) -> list[int]:
    """The episode's tokens without generated stop tokens that the template never writes.

    The documented rule: a reply keeps the token the model stopped on (mask 1). When the
    template's turn end begins with that token (SmolLM2's `<|im_end|>`), only the rest of
    the turn end follows; otherwise (the tiny model stops on `<|eos|>`, its template ends a
    turn with the text `<|end|>`) the stop token is extra and the whole turn end follows.
    """
    kept = []
    for token, generated in zip(episode.completion_ids, episode.loss_mask, strict=True):
        text = policy.tokenizer.decode([token])
        unrendered = token in policy.stop_tokens and not policy.turns.assistant_close.startswith(
            text
        )
        if not (generated and unrendered):
            kept.append(token)
    return episode.prompt_ids + kept


def generated_runs(episode: TokenEpisode) -> list[list[int]]:
    """The episode's generated tokens, one list per reply."""
    runs: list[list[int]] = []
    previous = 0
    for token, generated in zip(episode.completion_ids, episode.loss_mask, strict=True):
        if generated:
            if not previous:
                runs.append([])
            runs[-1].append(token)
        previous = generated
    return runs


@pytest.mark.parametrize("policy_name", POLICIES)
def test_episode_is_the_chat_template_of_the_conversation(policy_name, request):
    policy = request.getfixturevalue(policy_name)
    episodes, _ = multi_turn_episodes(policy)
    assert max(e.turns for e in episodes) == 3  # observations were appended
    for episode in episodes:
        assert len(episode.loss_mask) == len(episode.completion_ids) == len(episode.logprobs)
        text = render(policy.tokenizer, episode.messages, generation_prompt=False)
        decoded = policy.tokenizer.decode(
            template_rendering(policy, episode),
            skip_special_tokens=False,
            clean_up_tokenization_spaces=False,
        )
        assert decoded == text
        # token for token: the template's text tokenized, each reply as it was generated
        expected = policy.tokenizer.encode(text, add_special_tokens=False)
        if all(_canonical(policy, run) for run in generated_runs(episode)):
            assert template_rendering(policy, episode) == expected


def _canonical(policy: TransformersPolicy, run: list[int]) -> bool:
    """Whether the tokenizer would encode the reply's text to the same tokens."""
    content = run[:-1] if run[-1] in policy.stop_tokens else run
    text = policy.tokenizer.decode(content, skip_special_tokens=False)
    return policy.tokenizer.encode(text, add_special_tokens=False) == content


def test_smollm2_replies_tokenize_back_to_themselves_so_the_whole_check_runs(smollm2_policy):
    episodes, _ = multi_turn_episodes(smollm2_policy)
    runs = [run for episode in episodes for run in generated_runs(episode)]
    assert sum(_canonical(smollm2_policy, run) for run in runs) >= len(runs) // 2


def test_smollm2_template_adds_its_system_prompt_once(smollm2_policy):
    episodes, _ = multi_turn_episodes(smollm2_policy, count=2)
    assert smollm2_policy.turns.adds_system_prompt
    for episode in episodes:
        text = smollm2_policy.tokenizer.decode(episode.input_ids)
        assert text.startswith("<|im_start|>system\nYou are a helpful AI assistant named SmolLM")
        assert text.count("<|im_start|>system") == 1


@pytest.mark.parametrize("policy_name", POLICIES)
def test_masked_tokens_are_the_replies_the_environment_received(policy_name, request):
    policy = request.getfixturevalue(policy_name)
    episodes, log = multi_turn_episodes(policy)
    received = {tuple(entry["replies"]) for entry in log if entry.get("done")}
    for episode in episodes:
        replies = [
            policy.tokenizer.decode(
                run[:-1] if run[-1] in policy.stop_tokens else run,
                skip_special_tokens=False,
                clean_up_tokenization_spaces=False,
            )
            for run in generated_runs(episode)
        ]
        assert len(replies) == episode.turns
        assert tuple(replies) in received
        assert [m["content"] for m in episode.messages if m["role"] == "assistant"] == replies


@pytest.mark.parametrize("policy_name", POLICIES)
def test_logprobs_equal_a_fresh_forward_pass(policy_name, request):
    policy = request.getfixturevalue(policy_name)
    episodes, _ = multi_turn_episodes(policy, count=2)
    for episode in episodes:
        ids = torch.tensor([episode.input_ids])
        with torch.no_grad():
            logits = policy.model(input_ids=ids).logits[0].float()
        logprobs = torch.log_softmax(logits / policy.temperature, dim=-1)
        start = len(episode.prompt_ids)
        for offset, (token, generated) in enumerate(
            zip(episode.completion_ids, episode.loss_mask, strict=True)
        ):
            position = start + offset - 1  # the logits that predicted this token
            expected = float(logprobs[position, token]) if generated else 0.0
            assert episode.logprobs[offset] == pytest.approx(expected, abs=1e-4)


@pytest.mark.parametrize("autoreset", [AutoresetMode.SAME_STEP, AutoresetMode.DISABLED])
def test_reward_status_and_task_are_the_environments(tiny_policy, autoreset):
    log: list[dict] = []
    envs = gym.vector.SyncVectorEnv(
        [lambda: gym.wrappers.TransformReward(db_env(log, every_reply_queries=True), _shaped)] * 3,
        autoreset_mode=autoreset,
    )
    episodes = collect_episodes(envs, tiny_policy, 5, seed=1)
    envs.close()
    assert len(episodes) == 5
    recorded = {(e["task_index"], tuple(e["replies"])): e for e in log if e.get("done")}
    for episode in episodes:
        replies = tuple(m["content"] for m in episode.messages if m["role"] == "assistant")
        entry = recorded[(episode.task_index, replies)]
        assert episode.reward == pytest.approx(sum(_shaped(r) for r in entry["rewards"]))
        assert episode.reward > 0  # the shaped reward makes a dropped step visible
        assert episode.status == "task_limit_reached"
        assert episode.outcome == "incorrect"


def _shaped(reward: float) -> float:
    return reward + 0.25


def test_plain_db_env_format_failures_end_after_one_turn(tiny_policy):
    log: list[dict] = []
    env = db_env(log)
    episodes = collect_episodes(env, tiny_policy, 2, task_indices=[5, 7])
    assert [e.task_index for e in episodes] == [5, 7]
    assert [e.status for e in episodes] == ["agent_validation_failed"] * 2
    assert [e.turns for e in episodes] == [1, 1]
    assert [e.reward for e in episodes] == [0.0, 0.0]
    assert [entry["task_index"] for entry in log] == [5, 7]
