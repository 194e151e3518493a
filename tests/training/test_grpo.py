"""The GRPO loss on the tiny model: what it ignores, where it starts, when it is zero."""

from __future__ import annotations

import copy

import pytest
import torch

from lifelong_gym.training import TransformersPolicy
from lifelong_gym.training.grpo import EpisodeBatch, group_advantages, grpo_loss, token_logprobs

from .test_episodes import multi_turn_episodes


@pytest.fixture(scope="module")
def episodes(tiny_policy):
    found, _ = multi_turn_episodes(tiny_policy, count=4)
    return found


def loss_of(policy, episodes, advantages, **options):
    batch = EpisodeBatch.from_episodes(episodes, policy.pad_id)
    new = token_logprobs(policy.model, batch, policy.temperature)
    return grpo_loss(new, batch, advantages, **options), batch, new


def test_environment_tokens_do_not_change_the_loss(tiny_policy, episodes):
    advantages = torch.tensor([1.0, -1.0, 0.5, -0.5])
    base, batch, new = loss_of(tiny_policy, episodes, advantages)
    # more environment tokens after the last reply
    longer = copy.deepcopy(episodes)
    for episode in longer:
        episode.add_environment(tiny_policy.tokenizer.encode("Observation: [(1, 'x')]"))
    assert loss_of(tiny_policy, longer, advantages)[0].loss.item() == pytest.approx(
        base.loss.item(), abs=1e-7
    )
    # whatever sits in the logprobs at environment positions
    noisy = copy.copy(batch)
    noisy.old_logprobs = batch.old_logprobs + (1 - batch.loss_mask) * 5.0
    assert grpo_loss(new, noisy, advantages).loss.item() == pytest.approx(base.loss.item())
    # and no gradient reaches an environment position
    leaf = new.detach().requires_grad_()
    grpo_loss(leaf, batch, advantages, kl_coef=0.1, ref_logprobs=new.detach() - 0.3).loss.backward()
    assert torch.all(leaf.grad[batch.loss_mask == 0] == 0)
    assert torch.any(leaf.grad[batch.loss_mask == 1] != 0)


def assert_ratio_one_and_kl_zero(policy: TransformersPolicy, episodes) -> None:
    """Adapters on a policy that sampled `episodes`: ratio 1 and KL 0 to the adapters-off model."""
    from peft import LoraConfig, get_peft_model

    policy.model = get_peft_model(
        policy.model, LoraConfig(r=4, target_modules=["q_proj", "v_proj"], lora_dropout=0.0)
    ).eval()
    batch = EpisodeBatch.from_episodes(episodes, policy.pad_id)
    new = token_logprobs(policy.model, batch)
    generated = batch.loss_mask == 1
    assert generated.any()
    assert torch.allclose(new[generated], batch.old_logprobs[generated], atol=1e-4)
    with torch.no_grad(), policy.model.disable_adapter():
        ref = token_logprobs(policy.model, batch)
    terms = grpo_loss(new, batch, torch.ones(len(episodes)), kl_coef=0.5, ref_logprobs=ref)
    assert terms.kl.item() == pytest.approx(0.0, abs=1e-6)
    assert terms.ratio_mean.item() == pytest.approx(1.0, abs=1e-4)
    assert terms.clip_fraction.item() == 0.0


def test_before_the_first_update_the_ratio_is_one_and_the_kl_zero(tiny_model_dir, episodes):
    assert_ratio_one_and_kl_zero(TransformersPolicy(tiny_model_dir, temperature=1.0), episodes)


def test_grpo_from_a_saved_sft_checkpoint_starts_at_ratio_one_and_kl_zero(sft_checkpoint):
    """The warm start's folder, loaded as GRPO loads it, samples the logprobs it recomputes."""
    policy = TransformersPolicy(sft_checkpoint.folder, temperature=1.0, max_new_tokens=12, seed=1)
    found, _ = multi_turn_episodes(policy, count=4)
    assert_ratio_one_and_kl_zero(policy, found)


def test_a_group_with_equal_rewards_gives_zero_gradient(tiny_model_dir, episodes):
    policy = TransformersPolicy(tiny_model_dir, temperature=1.0)
    advantages = group_advantages([1.0, 1.0, 0.0, 0.0], [7, 7, 8, 8])
    assert advantages.tolist() == [0.0, 0.0, 0.0, 0.0]
    with torch.no_grad():
        ref = token_logprobs(policy.model, EpisodeBatch.from_episodes(episodes, policy.pad_id))
    terms, _, _ = loss_of(policy, episodes, advantages, kl_coef=0.1, ref_logprobs=ref)
    terms.loss.backward()
    grads = [p.grad for p in policy.model.parameters() if p.grad is not None]
    assert grads and all(torch.count_nonzero(g) == 0 for g in grads)
    # the same episodes with unequal rewards do move the weights
    policy.model.zero_grad()
    unequal = group_advantages([1.0, 0.0, 0.0, 1.0], [7, 7, 8, 8])
    loss_of(policy, episodes, unequal)[0].loss.backward()
    assert any(torch.count_nonzero(p.grad) for p in policy.model.parameters())


def test_group_advantages_are_normalised_within_each_group():
    advantages = group_advantages([1.0, 0.0, 3.0, 3.0, 5.0], [0, 0, 1, 1, 2])
    assert advantages[:2].tolist() == pytest.approx([1.0, -1.0], abs=1e-5)
    assert advantages[2:].tolist() == [0.0, 0.0, 0.0]  # equal rewards; a group of one
