"""`TransformersPolicy.generate`: a batch reads its shared prefix once and samples as one by one."""

from __future__ import annotations

import pytest

from lifelong_gym.training import TransformersPolicy
from lifelong_gym.training.policy import _shared_prefix


def test_a_batch_with_a_shared_prefix_generates_what_each_prompt_does_alone(tiny_model_dir):
    policy = TransformersPolicy(tiny_model_dir, temperature=0.0, max_new_tokens=8)
    shared = policy.prompt_ids("Work with SQL on a MySQL table. Count the rows of table t.")
    tails = ["a", "bb cc", "ddd eee fff ggg"]
    prompts = [shared + policy.tokenizer.encode(t, add_special_tokens=False) for t in tails]
    assert _shared_prefix(prompts) >= len(shared)  # the prefix is read once for the batch
    batched = policy.generate(prompts)
    for prompt, reply in zip(prompts, batched, strict=True):
        (alone,) = policy.generate([prompt])
        assert reply.token_ids == alone.token_ids
        assert reply.logprobs == pytest.approx(alone.logprobs, abs=1e-4)


def test_the_shared_prefix_leaves_every_prompt_a_token_of_its_own():
    assert _shared_prefix([[1, 2, 3], [1, 2, 3]]) == 2
    assert _shared_prefix([[1, 2, 3], [1, 2]]) == 1
    assert _shared_prefix([[1, 2, 3], [4, 2, 3]]) == 0
