"""TransformersModel and the model pool through the real `transformers` loading and generation."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from lifelong_gym.agents import (
    AgentContextLimitError,
    LanguageModelAgent,
    ModelConfigError,
    ModelPool,
    make_agent,
)
from lifelong_gym.session import Role, Session, SessionStatus

HISTORIES = [
    [{"role": "user", "content": "SELECT name FROM users;"}],
    [
        {"role": "user", "content": "List the files."},
        {"role": "assistant", "content": "OK."},
        {"role": "user", "content": "ls -la /home/user && cat file.txt | grep error"},
    ],
    [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "The quick fox."}],
]


@pytest.fixture(scope="module")
def pool(tiny_model_dir: Path) -> ModelPool:
    return ModelPool(
        [
            {"name": "tiny", "backend": "hf", "path": str(tiny_model_dir), "max_new_tokens": 12},
            {
                "name": "tiny-batched-by-two",
                "backend": "hf",
                "path": str(tiny_model_dir),
                "max_new_tokens": 12,
                "batch_size": 2,
            },
            {
                "name": "tiny-sampled",
                "backend": "hf",
                "path": str(tiny_model_dir),
                "max_new_tokens": 12,
                "temperature": 0.9,
            },
            {
                "name": "tiny-short",
                "backend": "hf",
                "path": str(tiny_model_dir),
                "max_new_tokens": 12,
                "max_context_tokens": 40,
            },
        ]
    )


def test_a_batch_gives_what_one_by_one_gives(pool: ModelPool):
    model = pool.get("tiny")
    one_by_one = [model.generate([history])[0] for history in HISTORIES]
    assert model.generate(HISTORIES) == one_by_one
    assert pool.get("tiny-batched-by-two").generate(HISTORIES) == one_by_one
    assert all(isinstance(reply, str) for reply in one_by_one)
    assert len(set(one_by_one)) > 1  # the replies depend on the history


def test_sampling_produces_replies(pool: ModelPool):
    replies = pool.get("tiny-sampled").generate(HISTORIES)
    assert len(replies) == 3


def test_token_counts_follow_the_chat_template(pool: ModelPool):
    model = pool.get("tiny")
    short = model.count_tokens(HISTORIES[0])
    longer = model.count_tokens(HISTORIES[0] + [{"role": "user", "content": "more words here"}])
    assert 0 < short < longer


def test_context_overflow_is_the_context_limit_status(pool: ModelPool):
    model = pool.get("tiny-short")
    assert model.generate(HISTORIES[:1])  # fits: 40 tokens leave room for a reply
    long_history = [{"role": "user", "content": "SELECT name FROM users; " * 20}]
    with pytest.raises(AgentContextLimitError) as caught:
        model.generate([long_history])
    assert caught.value.status == SessionStatus.AGENT_CONTEXT_LIMIT


def test_the_pool_shares_one_object_per_name(pool: ModelPool):
    assert pool.get("tiny") is pool.get("tiny")
    assert pool.get("tiny") is not pool.get("tiny-sampled")
    assert pool.names[0] == "tiny"


def test_a_missing_name_is_one_clear_error(pool: ModelPool):
    with pytest.raises(ModelConfigError, match="no model named 'huge'.*'tiny'"):
        pool.get("huge")


def test_a_path_without_a_model_fails_when_the_pool_is_made(tmp_path: Path):
    with pytest.raises(ModelConfigError, match="holds no model"):
        ModelPool([{"name": "m", "backend": "hf", "path": str(tmp_path)}])
    with pytest.raises(ModelConfigError, match="does not exist"):
        ModelPool([{"name": "m", "backend": "hf", "path": str(tmp_path / "nowhere")}])
    with pytest.raises(ModelConfigError, match="configured twice"):
        ModelPool([{"name": "m", "backend": "openai", "base_url": "http://h/v1", "model": "x"}] * 2)
    with pytest.raises(ModelConfigError, match="backend"):
        ModelPool([{"name": "m", "backend": "gguf", "path": str(tmp_path)}])


def test_a_folder_with_a_broken_model_fails_on_load(tmp_path: Path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "llama"}))
    pool = ModelPool([{"name": "broken", "backend": "hf", "path": str(tmp_path)}])
    with pytest.raises(ModelConfigError, match="cannot load model 'broken'"):
        pool.load_all()


def test_a_model_without_a_chat_template_needs_one_in_its_config(tiny_model_dir, tmp_path):
    folder = tmp_path / "no-template"
    shutil.copytree(tiny_model_dir, folder)
    (folder / "chat_template.jinja").unlink()
    config = {"name": "bare", "backend": "hf", "path": str(folder), "max_new_tokens": 4}
    with pytest.raises(ModelConfigError, match="no chat template; set chat_template"):
        ModelPool([config]).load_all()
    template = "{% for m in messages %}{{ m['content'] }}\n{% endfor %}"
    model = ModelPool([{**config, "chat_template": template}]).get("bare")
    assert model.prompt(HISTORIES[0]) == "SELECT name FROM users;\n"


def test_the_agent_from_its_spec(tiny_model_dir: Path):
    session = Session(task_index=0)
    session.add(Role.USER, "SELECT name FROM users;")
    agent = make_agent(f"hf:{tiny_model_dir}", tasks=None)  # type: ignore[arg-type]
    assert isinstance(agent, LanguageModelAgent)
    assert agent.act(session) == agent.model.generate(HISTORIES[:1])[0]  # type: ignore[attr-defined]


def test_a_sessions_next_turn_reads_only_its_new_tokens_and_replies_as_generate_does(
    tiny_model_dir: Path,
):
    config = {"backend": "hf", "path": str(tiny_model_dir), "max_new_tokens": 12}
    pool = ModelPool(
        [{**config, "name": "cached"}, {**config, "name": "plain", "reuse_cache": False}]
    )
    cached, plain = pool.get("cached"), pool.get("plain")
    assert cached.engine is not None and plain.engine is None
    reads: list[int] = []
    cached.model.register_forward_pre_hook(
        lambda _module, _args, kwargs: reads.append(kwargs["input_ids"].shape[1]), with_kwargs=True
    )
    histories = [list(h) for h in HISTORIES]
    for turn in range(3):
        reads.clear()
        replies = cached.generate(histories)
        assert replies == plain.generate(histories)
        if turn:  # each history is read from its previous turn on, never whole
            longest_new = max(
                cached.count_tokens(h) - cached.count_tokens(h[:-2]) for h in histories
            )
            assert max(reads) <= longest_new
        for history, reply in zip(histories, replies, strict=True):
            history += [
                {"role": "assistant", "content": reply},
                {"role": "user", "content": f"observation {turn}"},
            ]
