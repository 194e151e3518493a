"""The pieces of a GRPO update: group-normalised advantages, token logprobs, the clipped loss."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from lifelong_gym.decoding.sampling import sampling_logprobs

from .episode import TokenEpisode


@dataclass
class EpisodeBatch:
    """Episodes right-padded into tensors; every `[B, T]` tensor is aligned with `targets`.

    Position t of `targets` is token t + 1 of an episode, predicted from tokens 0..t of
    `input_ids`. `loss_mask` is 1 on generated tokens only; `old_logprobs` are the
    sampling logprobs recorded at rollout.
    """

    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    targets: torch.Tensor
    loss_mask: torch.Tensor
    old_logprobs: torch.Tensor

    @classmethod
    def from_episodes(cls, episodes: Sequence[TokenEpisode], pad_id: int) -> EpisodeBatch:
        """Pad `episodes` on the right into one batch."""
        length = max(len(e.input_ids) for e in episodes)
        rows = len(episodes)
        ids = torch.full((rows, length), pad_id, dtype=torch.long)
        attention = torch.zeros((rows, length), dtype=torch.long)
        mask = torch.zeros((rows, length), dtype=torch.float32)
        old = torch.zeros((rows, length), dtype=torch.float32)
        for row, episode in enumerate(episodes):
            start, end = len(episode.prompt_ids), len(episode.input_ids)
            ids[row, :end] = torch.tensor(episode.input_ids)
            attention[row, :end] = 1
            mask[row, start:end] = torch.tensor(episode.loss_mask, dtype=torch.float32)
            old[row, start:end] = torch.tensor(episode.logprobs, dtype=torch.float32)
        return cls(ids[:, :-1], attention[:, :-1], ids[:, 1:], mask[:, 1:], old[:, 1:])


def token_logprobs(
    model: Any, batch: EpisodeBatch, temperature: float = 1.0, top_p: float = 1.0
) -> torch.Tensor:
    """The logprob of each target token under `model`'s sampling distribution, `[B, T]`."""
    logits = model(input_ids=batch.input_ids, attention_mask=batch.attention_mask).logits
    logprobs = sampling_logprobs(logits, temperature, top_p)
    picked = logprobs.gather(-1, batch.targets[..., None]).squeeze(-1)
    # tokens outside a top-p nucleus have -inf logprobs; they are never generated tokens
    return picked.masked_fill(batch.loss_mask == 0, 0.0)


def group_advantages(
    rewards: Sequence[float], groups: Sequence[int], eps: float = 1e-6
) -> torch.Tensor:
    """Each reward minus its group's mean, over the group's standard deviation (+ eps).

    A group whose rewards are all equal gets advantage 0 for every episode.
    """
    values = torch.tensor(rewards, dtype=torch.float32)
    keys = torch.tensor(groups)
    advantages = torch.zeros_like(values)
    for key in keys.unique():
        members = keys == key
        group = values[members]
        std = group.std(unbiased=False) if len(group) > 1 else torch.tensor(0.0)
        advantages[members] = (group - group.mean()) / (std + eps)
    return advantages


def masked_mean(
    values: torch.Tensor, mask: torch.Tensor, token_count: float | None = None
) -> torch.Tensor:
    """The sum of `values` where `mask` is 1, over `token_count` (default: the mask's sum).

    Give the whole batch's count when a batch is split into micro-batches, so their
    gradients add up to the gradient of the batch's token mean.
    """
    count = mask.sum().clamp(min=1.0) if token_count is None else token_count
    return (values * mask).sum() / count


@dataclass
class GRPOLoss:
    """The loss and each of its terms, as tensors (the loss keeps its graph)."""

    loss: torch.Tensor
    policy_loss: torch.Tensor
    kl: torch.Tensor
    clip_fraction: torch.Tensor
    ratio_mean: torch.Tensor


def grpo_loss(
    new_logprobs: torch.Tensor,
    batch: EpisodeBatch,
    advantages: torch.Tensor,
    *,
    clip_eps: float = 0.2,
    kl_coef: float = 0.0,
    ref_logprobs: torch.Tensor | None = None,
    token_count: float | None = None,
) -> GRPOLoss:
    """The clipped-ratio policy loss plus `kl_coef` times the k3 KL to a reference.

    Every term is a masked token mean over the generated tokens (of the whole batch when
    `token_count` is given), so environment tokens (mask 0) contribute nothing.
    k3 = exp(ref - new) - (ref - new) - 1.
    """
    mask = batch.loss_mask
    log_ratio = (new_logprobs - batch.old_logprobs) * mask
    ratio = torch.exp(log_ratio)
    advantage = advantages[:, None].to(ratio.dtype)
    unclipped = ratio * advantage
    clipped = torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * advantage
    policy_loss = masked_mean(-torch.minimum(unclipped, clipped), mask, token_count)
    if ref_logprobs is not None:
        ref_minus_new = (ref_logprobs - new_logprobs) * mask
        kl = masked_mean(torch.exp(ref_minus_new) - ref_minus_new - 1, mask, token_count)
    else:
        kl = torch.zeros((), dtype=policy_loss.dtype)
    clip_fraction = masked_mean(((ratio - 1).abs() > clip_eps).float(), mask)
    return GRPOLoss(
        loss=policy_loss + kl_coef * kl,
        policy_loss=policy_loss,
        kl=kl,
        clip_fraction=clip_fraction.detach(),
        ratio_mean=masked_mean(ratio, mask).detach(),
    )
