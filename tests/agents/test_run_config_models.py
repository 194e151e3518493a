"""Models configured in the run's YAML: the pool, `--agent model:NAME`, and clear errors."""

from __future__ import annotations

import json

import yaml
from click.testing import CliRunner

from lifelong_gym.cli import main


def _run(tmp_path, config: dict) -> object:
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(config))
    return CliRunner().invoke(main, ["run", "--config", str(path), "--no-progress"])


def test_a_pool_model_named_in_the_yaml_runs_tasks(tmp_path, tiny_model_dir):
    config = {
        "env": "LifelongDB-v0",
        "output": str(tmp_path / "out"),
        "max_tasks": 2,
        "agent": "model:tiny",
        "models": [
            {"name": "tiny", "backend": "hf", "path": str(tiny_model_dir), "max_new_tokens": 8}
        ],
    }
    result = _run(tmp_path, config)
    assert result.exit_code == 0, result.output
    lines = (tmp_path / "out" / "sessions.jsonl").read_text().splitlines()
    assert len(lines) == 2
    assert all(json.loads(line)["status"] != "agent_unknown_error" for line in lines)


def test_unknown_pool_model_and_bad_config_are_one_clear_error(tmp_path, tiny_model_dir):
    models = [{"name": "tiny", "backend": "hf", "path": str(tiny_model_dir)}]
    result = _run(tmp_path, {"output": str(tmp_path / "a"), "agent": "model:big", "models": models})
    assert result.exit_code == 1 and "big" in result.output and "tiny" in result.output
    bad = [{"name": "x", "backend": "hf", "path": str(tmp_path / "nowhere")}]
    result = _run(tmp_path, {"output": str(tmp_path / "b"), "agent": "model:x", "models": bad})
    assert result.exit_code == 1 and "does not exist" in result.output
    result = _run(tmp_path, {"output": str(tmp_path / "c"), "agent": "model:x"})
    assert result.exit_code == 1 and "needs models configured" in result.output
