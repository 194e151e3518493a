"""The back-ends' usage: each reply's tokens as the transformers back-end counts them (checked
against an independent count) and as an OpenAI-compatible server reports them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lifelong_gym.agents import ModelPool, OpenAIModelConfig, Usage
from lifelong_gym.agents.models.openai_chat import OpenAIChatModel

from .chat_server import ChatServer, Reply

HISTORIES = [
    [{"role": "user", "content": "SELECT name FROM users;"}],
    [
        {"role": "user", "content": "List the files."},
        {"role": "assistant", "content": "OK."},
        {"role": "user", "content": "ls -la /home/user && cat file.txt | grep error"},
    ],
]
NEW_TOKENS = 6


@pytest.fixture(scope="module")
def tiny(tiny_model_dir: Path):
    config = {"name": "tiny", "backend": "hf", "path": str(tiny_model_dir)}
    return ModelPool([{**config, "max_new_tokens": NEW_TOKENS, "batch_size": 2}]).get("tiny")


def independent_generation(model, messages) -> tuple[int, list[int]]:
    """The prompt's token count and the generated ids, by the tokenizer and model directly."""
    import torch

    ids = model.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
    ids = ids["input_ids"] if hasattr(ids, "keys") else ids
    with torch.inference_mode():
        output = model.model.generate(
            torch.tensor([ids]),
            attention_mask=torch.ones(1, len(ids), dtype=torch.long),
            max_new_tokens=NEW_TOKENS,
            do_sample=False,
            pad_token_id=model.tokenizer.pad_token_id,
        )
    return len(ids), output[0, len(ids) :].tolist()


def test_transformers_counts_what_it_fed_and_generated(tiny):
    mark = tiny.usage.mark()
    for messages in HISTORIES:  # one at a time: the same computation as the check's
        tiny.generate([messages])
    logged = tiny.usage.since(mark)
    expected = []
    for messages in HISTORIES:
        prompt, generated = independent_generation(tiny, messages)
        assert generated and len(generated) <= NEW_TOKENS
        expected.append(Usage(prompt, len(generated)))
    assert logged == expected
    assert logged[0].prompt_tokens != logged[1].prompt_tokens

    # a padded batch: each reply's prompt is its own tokens, the padding left out
    mark = tiny.usage.mark()
    tiny.generate(HISTORIES)
    batch = tiny.usage.since(mark)
    assert [u.prompt_tokens for u in batch] == [u.prompt_tokens for u in expected]
    assert all(1 <= u.generated_tokens <= NEW_TOKENS for u in batch)


def test_transformers_counts_up_to_the_token_that_stopped_it(tiny):
    _prompt, generated = independent_generation(tiny, HISTORIES[0])
    config = tiny.model.generation_config
    saved = config.eos_token_id
    config.eos_token_id = generated[1]  # make the second token generated end the reply
    try:
        mark = tiny.usage.mark()
        tiny.generate([HISTORIES[0]])
        (usage,) = tiny.usage.since(mark)
    finally:
        config.eos_token_id = saved
    assert usage.generated_tokens == 1 + generated.index(generated[1])


def completion(usage: object) -> bytes:
    body = {
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "OK."}}],
        "usage": usage,
    }
    return json.dumps(body).encode()


def test_an_openai_server_s_usage_is_logged_and_its_absence_is_unknown(chat_server: ChatServer):
    config = OpenAIModelConfig(
        name="remote", base_url=chat_server.base_url, model="served", max_new_tokens=8
    )
    model = OpenAIChatModel(config)
    chat_server.push(
        Reply(body=completion({"prompt_tokens": 1234, "completion_tokens": 56})),
        Reply(body=completion(None)),
        Reply(body=completion({"prompt_tokens": 7})),
    )
    for _ in range(3):
        assert model.generate([HISTORIES[0]]) == ["OK."]
    assert model.usage.since(0) == [Usage(1234, 56), Usage(None, None), Usage(7, None)]
    model.close()
