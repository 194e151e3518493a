"""SmolLM2-135M-Instruct (a GGUF file) through the transformers back-end: specs and a DB run."""

from __future__ import annotations

import shutil
from pathlib import Path

import gymnasium as gym
import pytest

import lifelong_gym  # noqa: F401 - registers the ids
from lifelong_gym.agents import LanguageModelAgent, ModelConfigError, ModelPool
from lifelong_gym.agents.pool import parse_model_config
from lifelong_gym.session import Role, SessionStatus

from ..envs.db_fixtures import task_file, task_records
from .episodes import run_batch

# what an episode played to its end by a working model can end as
PLAYED = {
    SessionStatus.COMPLETED,
    SessionStatus.AGENT_VALIDATION_FAILED,
    SessionStatus.TASK_LIMIT_REACHED,
}


@pytest.fixture(scope="session")
def smollm2_pool(smollm2_path: Path) -> ModelPool:
    """SmolLM2 loaded once for every test of the session (about 30 s on two cores)."""
    pool = ModelPool(
        [{"name": "smollm2", "backend": "hf", "path": "smollm2", "max_new_tokens": 24}]
    )
    pool.load_all()
    return pool


def test_the_short_name_and_a_folder_locate_the_gguf_file(smollm2_path: Path, tmp_path: Path):
    config = parse_model_config({"name": "m", "backend": "hf", "path": "smollm2"})
    assert config.path == str(smollm2_path.resolve())
    assert (config.folder, config.gguf_file) == (str(smollm2_path.parent), smollm2_path.name)
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "weights.gguf").symlink_to(smollm2_path)
    assert parse_model_config({"name": "m", "backend": "hf", "path": str(folder)}).gguf_file
    shutil.copy(folder / "weights.gguf", folder / "other.gguf")
    with pytest.raises(ModelConfigError, match=r"several GGUF files \(other.gguf, weights.gguf\)"):
        parse_model_config({"name": "m", "backend": "hf", "path": str(folder)})


def test_a_file_that_is_not_gguf_is_refused(tmp_path: Path):
    weights = tmp_path / "model.bin"
    weights.write_bytes(b"\0" * 16)
    with pytest.raises(ModelConfigError, match="holds no model"):
        parse_model_config({"name": "m", "backend": "hf", "path": str(weights)})


def test_smollm2_has_a_real_chat_template(smollm2_pool: ModelPool):
    model = smollm2_pool.get("smollm2")
    prompt = model.prompt([{"role": "user", "content": "Name one SQL keyword."}])
    assert prompt.endswith("<|im_start|>assistant\n")
    assert "<|im_start|>user\nName one SQL keyword.<|im_end|>" in prompt


def test_smollm2_runs_db_tasks_end_to_end(smollm2_pool: ModelPool, tmp_path: Path):
    envs = [
        gym.make("LifelongDB-v0", tasks=str(task_file(tmp_path)), backend="sqlite", max_turns=2)
        for _ in range(2)
    ]
    try:
        agent = LanguageModelAgent(smollm2_pool.get("smollm2"))
        indices = [record["sample_index"] for record in task_records()][:2]
        infos = run_batch(envs, agent, indices)
        sessions = [env.unwrapped.session for env in envs]
    finally:
        for env in envs:
            env.close()
    for info, session in zip(infos, sessions, strict=True):
        assert info["status"] in PLAYED, info
        assert info["outcome"] in {"correct", "incorrect"}, info
        replies = [m.content for m in session.chat_history if m.role == Role.AGENT]
        assert replies and all(any(c.isalpha() for c in reply) for reply in replies), replies


def test_lifelong_gym_model_saves_the_gguf_weights_as_a_folder(smollm2_pool, tmp_path: Path):
    """`lifelong-gym model smollm2 DIR` writes a folder that computes what the GGUF file does."""
    import torch
    from click.testing import CliRunner
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from lifelong_gym.cli import main

    folder = tmp_path / "smollm2"
    done = CliRunner().invoke(main, ["model", "smollm2", str(folder)])
    assert done.exit_code == 0, done.output
    assert done.stdout.strip() == f"saved {folder}"  # the progress bars go to stderr
    gguf = smollm2_pool.get("smollm2")
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
    assert tokenizer.chat_template == gguf.tokenizer.chat_template
    ids = tokenizer("SELECT COUNT(*) FROM users;", return_tensors="pt").input_ids
    assert (
        ids.tolist()
        == gguf.tokenizer("SELECT COUNT(*) FROM users;", return_tensors="pt").input_ids.tolist()
    )
    with torch.no_grad():
        assert torch.equal(model(ids).logits, gguf.model(ids).logits)

    again = CliRunner().invoke(main, ["model", "smollm2", str(folder)])
    assert again.exit_code == 1 and "already holds a model" in again.output
    assert again.output.count("\n") == 1
    wrong = CliRunner().invoke(main, ["model", str(tmp_path / "none.gguf"), str(tmp_path / "x")])
    assert wrong.exit_code == 1 and wrong.output.startswith("Error: ")
    assert "neither `smollm2` nor a .gguf file" in wrong.output
