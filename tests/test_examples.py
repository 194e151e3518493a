"""The scripts in examples/ run as a newcomer would run them."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def run(script: str, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / script), *args],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_replay_study(tmp_path):
    out = run("replay_study.py", "--output", str(tmp_path), "--sizes", "0", "2", "--max-tasks", "5")
    overall = [line.split() for line in out.splitlines() if line.startswith("overall")]
    assert overall[-1] == ["overall", "100.0%", "100.0%", "(+0.0)"]  # the oracle, twice
    assert (tmp_path / "comparison.png").is_file()
    assert (tmp_path / "replay-2" / "sessions.jsonl").read_text().count("\n") == 5


def test_ray_cluster():
    pytest.importorskip("ray", reason="needs Ray: pip install 'lifelong-gym[ray]'")
    out = run("ray_cluster.py", "--db-envs", "2", "--episodes", "1")
    assert "LifelongDB-v0: 2 actors on" in out
    assert "2 episodes, mean reward 1.00" in out


def test_skyrl_episodes():
    pytest.importorskip("skyrl_gym", reason="pip install 'lifelong-gym[skyrl]'")
    out = run("skyrl_episodes.py", "--episodes", "3", "--action-format", "tools")
    assert out.count("reward 1.0 completed correct") == 3
    assert "mean correct 1.00 over 3 episodes" in out


def test_trl_grpo(tmp_path):
    pytest.importorskip("trl", reason="pip install 'lifelong-gym[trl]'")
    out = run(
        "trl_grpo.py",
        "--tiny",
        "--steps",
        "2",
        "--max-completion-length",
        "12",
        "--output",
        str(tmp_path),
    )
    rewards = [line for line in out.splitlines() if line.startswith("step ")]
    assert [line.split(":")[0] for line in rewards] == ["step 1", "step 2"]


def test_grpo_train_measures_before_and_after_and_updates(tiny_model_dir):
    """The example end to end on the tiny model: held-out figures before and after, two updates."""
    pytest.importorskip("peft", reason="the GRPO example's LoRA needs peft")
    out = run(
        "grpo_train.py",
        *("--model", str(tiny_model_dir), "--steps", "2", "--pool-size", "40"),
        *("--num-envs", "2", "--tasks-per-step", "1", "--group-size", "2"),
        *("--max-new-tokens", "3", "--eval-episodes", "2", "--lora-rank", "2"),
    )
    figures = dict(re.findall(r"^(valid_action_rate|success_rate): (\S+ -> \S+)$", out, re.M))
    assert set(figures) == {"valid_action_rate", "success_rate"}
    step_line = r"^step +(\d+) .*policy_loss [-+]\d\.\d+ .*grad_norm \d+\.\d+ "
    steps = re.findall(step_line, out, re.M)
    assert [int(step) for step in steps] == [1, 2]  # each line follows optimizer.step()
