"""The sampling distribution of a policy: temperature, then nucleus (top-p) filtering."""

from __future__ import annotations

import torch


def sampling_logprobs(logits: torch.Tensor, temperature: float, top_p: float) -> torch.Tensor:
    """Log-probabilities of the distribution tokens are sampled from (float32, last dim).

    Temperature 0 means greedy decoding; its log-probabilities are those of the untempered
    distribution. Tokens outside the nucleus get -inf.
    """
    logits = logits.float()
    if temperature > 0:
        logits = logits / temperature
    logprobs = torch.log_softmax(logits, dim=-1)
    if temperature <= 0 or top_p >= 1.0:
        return logprobs
    sorted_logprobs, order = torch.sort(logprobs, dim=-1, descending=True)
    mass_before = torch.cumsum(sorted_logprobs.exp(), dim=-1) - sorted_logprobs.exp()
    drop_sorted = mass_before >= top_p  # the most likely token is always kept
    drop = torch.zeros_like(drop_sorted).scatter(-1, order, drop_sorted)
    return torch.log_softmax(logprobs.masked_fill(drop, float("-inf")), dim=-1)


def sample(
    logits: torch.Tensor, temperature: float, top_p: float, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """One token per row of `logits`, and its log-probability under the sampling distribution."""
    logprobs = sampling_logprobs(logits, temperature, top_p)
    if temperature <= 0:
        tokens = logprobs.argmax(dim=-1)
    else:
        tokens = torch.multinomial(logprobs.exp(), 1, generator=generator).squeeze(-1)
    return tokens, logprobs.gather(-1, tokens[:, None]).squeeze(-1)
