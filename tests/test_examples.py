"""The scripts in examples/ run as a newcomer would run them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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
