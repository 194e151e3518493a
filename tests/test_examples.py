"""The scripts in examples/ run as a newcomer would run them."""

from __future__ import annotations

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


def test_openenv_sessions_play_a_served_environment():
    pytest.importorskip("openenv", reason="the example needs the openenv extra")
    out = run("openenv_sessions.py", "--sessions", "2", "--episodes", "4")
    assert out.strip().splitlines()[-1] == "score 4/4"  # the oracle, through the server


def test_verl_dataset_rows_name_their_episodes_for_the_agent_loop(tmp_path):
    pytest.importorskip("verl", reason="the example's rows are for the verl extra")
    import pyarrow.parquet as pq

    from lifelong_gym.integrations.verl import _episode_spec

    run("verl_dataset.py", "--output", str(tmp_path), "--tasks", "3", "--action-format", "tools")
    rows = pq.read_table(tmp_path / "train.parquet").to_pylist()
    assert [r["agent_name"] for r in rows] == ["lifelong_gym"] * 3
    spec = _episode_spec(rows[2]["extra_info"])
    assert spec == {
        "env_id": "LifelongDB-v0",
        "env_kwargs": {"action_format": "tools"},
        "task_index": 2,
    }
    assert "LifelongAgentLoop" in (tmp_path / "agent_loops.yaml").read_text()
