"""`TransformersPolicy.generate`: a batch reads its shared prefix once, a session's next turn
reads only its new tokens, and both sample what each prompt gives alone from scratch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from lifelong_gym.decoding.kv_cache import common_prefix
from lifelong_gym.errors import ChatTemplateError, ModelConfigError
from lifelong_gym.training import TransformersPolicy


def test_a_batch_with_a_shared_prefix_generates_what_each_prompt_does_alone(tiny_model_dir):
    policy = TransformersPolicy(tiny_model_dir, temperature=0.0, max_new_tokens=8)
    shared = policy.prompt_ids("Work with SQL on a MySQL table. Count the rows of table t.")
    tails = ["a", "bb cc", "ddd eee fff ggg"]
    prompts = [shared + policy.tokenizer.encode(t, add_special_tokens=False) for t in tails]
    lengths = read_lengths(policy)
    batched = policy.generate(prompts)
    reads = lengths[: len(prompts)]  # one forward pass a row before the decoding
    assert reads[0] == len(prompts[0]) - 1  # the shared prefix is read once, with the first
    assert all(n < len(p) - len(shared) for n, p in zip(reads[1:], prompts[1:], strict=True))
    for prompt, reply in zip(prompts, batched, strict=True):
        (alone,) = policy.generate([prompt])
        assert reply.token_ids == alone.token_ids
        assert reply.logprobs == pytest.approx(alone.logprobs, abs=1e-4)


def read_lengths(policy: TransformersPolicy) -> list[int]:
    """The number of tokens of each forward pass of `policy`'s model, recorded from now on."""
    lengths: list[int] = []
    policy.model.register_forward_pre_hook(
        lambda _module, _args, kwargs: lengths.append(kwargs["input_ids"].shape[1]),
        with_kwargs=True,
    )
    return lengths


def test_a_sessions_next_turn_reads_only_its_new_tokens_and_samples_as_from_scratch(
    tiny_model_dir,
):
    kept = TransformersPolicy(tiny_model_dir, temperature=0.0, max_new_tokens=6)
    fresh = TransformersPolicy(tiny_model_dir, temperature=0.0, max_new_tokens=6, reuse_cache=False)
    prompts = [kept.prompt_ids(f"Count the rows of table t{i}.") for i in range(3)]
    first, *_, last = (fresh.generate([p])[0].token_ids for p in prompts)
    stop = next(t for k, t in enumerate(first) if t not in last[: k + 1])
    for policy in (kept, fresh):  # the first reply ends early: its row leaves the batch
        policy.stop_tokens = policy.stop_tokens | {stop}
    new_tokens = max(len(p) for p in prompts)
    lengths = read_lengths(kept)
    for turn in range(3):
        lengths.clear()
        replies = kept.generate(prompts)
        assert max(lengths) <= new_tokens  # no forward pass read more than a turn's new tokens
        if not turn:  # rows left the batch at different steps
            assert len({len(r.token_ids) for r in replies}) > 1
        for prompt, reply in zip(prompts, replies, strict=True):
            fresh.kv.keep([])  # nothing cached: every token of the prompt is read
            (alone,) = fresh.generate([prompt])
            assert reply.token_ids == alone.token_ids
            assert reply.logprobs == pytest.approx(alone.logprobs, abs=1e-4)
        observations = [
            kept.tokenizer.encode(f" result {turn} {i}", add_special_tokens=False) for i in range(3)
        ]
        new_tokens = 1 + max(len(o) for o in observations)  # a reply's last token, unread
        prompts = [
            p + r.token_ids + o for p, r, o in zip(prompts, replies, observations, strict=True)
        ]


def test_grpo_groups_in_one_batch_read_each_prompt_once(tiny_model_dir):
    """Two tasks, each played twice in one batch (GRPO groups): the shared instructions and
    each task's own text are read once; each row still samples on its own."""
    policy = TransformersPolicy(tiny_model_dir, temperature=1.0, max_new_tokens=6)
    instructions = policy.prompt_ids("Work with SQL on a MySQL table. Answer in one line.")
    tasks = [
        instructions + policy.tokenizer.encode(text, add_special_tokens=False)
        for text in (" Count the rows of table t.", " Sum the price column of orders.")
    ]
    shapes: list[tuple[int, int]] = []
    policy.model.register_forward_pre_hook(
        lambda _module, _args, kwargs: shapes.append(tuple(kwargs["input_ids"].shape)),
        with_kwargs=True,
    )
    replies = policy.generate([tasks[0], tasks[0], tasks[1], tasks[1]])
    reads = [tokens for rows, tokens in shapes if rows == 1]  # decoding reads all rows at once
    shared = common_prefix(np.array(tasks[0]), np.array(tasks[1]), len(tasks[1]))
    assert shared >= len(instructions)
    assert reads == [len(tasks[0]) - 1, len(tasks[1]) - 1 - shared]
    assert len({tuple(r.token_ids) for r in replies}) > 1


def test_a_new_episode_reads_the_instructions_from_another_episodes_cache(tiny_model_dir):
    policy = TransformersPolicy(tiny_model_dir, temperature=0.0, max_new_tokens=4)
    instructions = policy.prompt_ids("Work with SQL on a MySQL table. Answer in one line.")
    policy.generate([instructions + policy.tokenizer.encode(" first", add_special_tokens=False)])
    lengths = read_lengths(policy)
    second = policy.tokenizer.encode(" second task", add_special_tokens=False)
    policy.generate([instructions + second])
    assert lengths[0] <= len(second) + 1  # the instructions came from the cache


def test_states_read_before_a_weight_update_are_not_reused_after_it(tiny_model_dir):
    """An optimizer step between two calls (GRPO, online training) makes the kept states
    stale: the next call reads its prompt again, and samples what the new weights give."""
    kept = TransformersPolicy(tiny_model_dir, temperature=0.0, max_new_tokens=6)
    fresh = TransformersPolicy(tiny_model_dir, temperature=0.0, max_new_tokens=6, reuse_cache=False)
    prompt = kept.prompt_ids("Count the rows of table t.")
    (first,) = kept.generate([prompt])
    for policy in (kept, fresh):
        with torch.no_grad():  # as an optimizer's step changes them: in place
            for parameter in policy.model.parameters():
                parameter.mul_(1.5)
    follow_up = prompt + first.token_ids + kept.tokenizer.encode(" ok", add_special_tokens=False)
    lengths = read_lengths(kept)
    (after,) = kept.generate([follow_up])
    (alone,) = fresh.generate([follow_up])
    assert lengths[0] == len(follow_up) - 1  # nothing of the old states was taken
    assert after.token_ids == alone.token_ids
    assert after.logprobs == pytest.approx(alone.logprobs, abs=1e-4)


def test_a_template_that_rewrites_earlier_turns_is_refused_with_the_fix(tiny_model_dir):
    # Mistral's manner: the system prompt goes into the last user turn, so adding a turn
    # changes the text before it
    moving = (
        "{% set last = namespace(user=0) %}{% for m in messages %}{% if m.role == 'user' %}"
        "{% set last.user = loop.index0 %}{% endif %}{% endfor %}"
        "{% for m in messages %}{% if m.role == 'user' %}[INST] "
        "{% if loop.index0 == last.user and messages[0].role == 'system' %}"
        "{{ messages[0].content }} {% endif %}"
        "{{ m.content }} [/INST]{% elif m.role == 'assistant' %}{{ m.content }}</s>{% endif %}"
        "{% endfor %}"
    )
    with pytest.raises(ChatTemplateError, match="rewrites earlier turns.*chat_template="):
        TransformersPolicy(tiny_model_dir, system_prompt="Be brief.", chat_template=moving)


def test_a_model_with_sliding_window_attention_is_refused(tiny_model_dir):
    from transformers import AutoTokenizer, MistralConfig, MistralForCausalLM

    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    config = MistralConfig(
        vocab_size=len(tokenizer),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        sliding_window=8,
    )
    with pytest.raises(ModelConfigError, match="full attention in every layer"):
        TransformersPolicy(MistralForCausalLM(config), tokenizer)


def test_a_batch_cache_writes_new_states_in_place_and_grows_when_full():
    """The batch cache's layers keep their states in buffers with room: a token within the
    room is written in place, one past it grows the buffers, and rows can leave; the states
    read back are always exactly the ones written, in order."""
    import torch

    from lifelong_gym.decoding.kv_cache import RoomyLayer

    written = torch.arange(2 * 1 * 3 * 2, dtype=torch.float32).reshape(2, 1, 3, 2)
    keys = torch.zeros(2, 1, 4, 2)
    keys[:, :, :3] = written
    layer = RoomyLayer(keys, keys.clone(), 3)
    room = layer._buffers[0]
    new = torch.full((2, 1, 1, 2), -1.0)
    got_keys, got_values = layer.update(new, new)
    assert layer._buffers[0] is room  # in place: within the room, no new buffer
    assert torch.equal(got_keys, torch.cat([written, new], dim=2))
    assert torch.equal(got_values, got_keys) and layer.get_seq_length() == 4
    more = torch.full((2, 1, 3, 2), -2.0)
    got_keys, _ = layer.update(more, more)  # past the room: the buffers grow
    assert layer._buffers[0].shape[2] >= 7
    assert torch.equal(got_keys, torch.cat([written, new, more], dim=2))
    layer.batch_select_indices(torch.tensor([1]))
    assert torch.equal(layer.keys, torch.cat([written, new, more], dim=2)[1:])
