"""The `lifelong-gym` command: run, resume, config files, report, and survival of SIGKILL."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from lifelong_gym.cli import main
from lifelong_gym.envs.db.tasks import load_db_tasks
from lifelong_gym.envs.os.image import DEFAULT_IMAGE, image_exists
from tests.command_line import invoke_run
from tests.crash_support import kill_until_done

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def dev_tasks(external_dir) -> str:
    return str(external_dir / "agentbench/data/dbbench/dev.jsonl")


def test_run_writes_metrics_plots_and_resumes(tmp_path, dev_tasks):
    out = tmp_path / "run"
    result = invoke_run("--tasks", dev_tasks, "--output", str(out), "--max-tasks", "5")
    assert result.exit_code == 0, result.output
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["success_rate"] == 1.0 and metrics["status_counts"] == {"completed": 5}
    assert metrics["per_skill"]
    assert (out / "learning_curve.png").exists() and (out / "per_skill.png").exists()
    assert json.loads((out / "config.json").read_text())["user"]["agent"] == "oracle"
    result = invoke_run("--tasks", dev_tasks, "--output", str(out), "--max-tasks", "9")
    assert result.exit_code == 0, result.output
    assert len((out / "sessions.jsonl").read_text().splitlines()) == 9


def test_a_yaml_config_is_the_same_run_as_the_flags(tmp_path, dev_tasks):
    out = tmp_path / "run"
    config = tmp_path / "run.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "tasks": dev_tasks,
                "output": str(out),
                "max-tasks": 3,
                "env_args": {"max_turns": 4},
                "callbacks": ["tests.crash_support.Saboteur:every=2"],
            }
        )
    )
    assert invoke_run("--config", str(config)).exit_code == 0
    flags = [
        "--tasks", dev_tasks, "--output", str(out), "--max-tasks", "6",
        "--env-arg", "max_turns=4", "--callback", "tests.crash_support.Saboteur:every=2",
    ]  # fmt: skip
    result = invoke_run(*flags)
    assert result.exit_code == 0, result.output  # resumed: same config
    lines = [json.loads(x) for x in (out / "sessions.jsonl").read_text().splitlines()]
    assert len(lines) == 6
    state = json.loads((out / "state.json").read_text())
    assert state["callbacks"]["Saboteur"]["seen"] == 6
    result = invoke_run(*flags[:-1], "tests.crash_support.Saboteur:every=3")
    assert result.exit_code == 1
    assert "user.callbacks" in result.output and "--overwrite" in result.output
    overwritten = invoke_run(*flags[:-1], "tests.crash_support.Saboteur:every=3", "--overwrite")
    assert overwritten.exit_code == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--agent", "gpt-9"], "unknown agent 'gpt-9'; known agents: oracle"),
        (["--env-arg", "max_turns"], "--env-arg 'max_turns' is not key=value"),
        (["--env-arg", "colour=red"], "takes no argument 'colour'"),
        (["--env", "LifelongNope-v0"], "env 'LifelongNope-v0'"),
        (["--callback", "nope"], "no callback named 'nope'"),
        (["--max-tasks", "0"], "max_tasks: Input should be greater than or equal to 1"),
    ],
)
def test_bad_input_is_one_clear_error(tmp_path, dev_tasks, args, message):
    result = invoke_run("--tasks", dev_tasks, "--output", str(tmp_path / "run"), *args)
    assert result.exit_code == 1
    assert message in result.output
    assert "Traceback" not in result.output


def test_bad_config_files_are_clear_errors(tmp_path):
    config = tmp_path / "run.yaml"
    config.write_text("output: x\ncolour: red\n")
    result = invoke_run("--config", str(config))
    assert result.exit_code == 1 and "colour: Extra inputs are not permitted" in result.output
    result = invoke_run("--config", str(tmp_path / "absent.yaml"))
    assert result.exit_code == 1 and "cannot read config" in result.output
    result = invoke_run("--tasks", "x.jsonl")
    assert result.exit_code == 1 and "output: Field required" in result.output


def test_report_prints_metrics_and_writes_plots(tmp_path, dev_tasks):
    out = tmp_path / "run"
    invoke_run("--tasks", dev_tasks, "--output", str(out), "--max-tasks", "4")
    (out / "per_skill.png").unlink()
    result = CliRunner().invoke(main, ["report", str(out)])
    assert result.exit_code == 0, result.output
    assert "sessions 4   correct 4   success rate 100.0%" in result.output
    assert (out / "per_skill.png").exists()
    result = CliRunner().invoke(main, ["report", str(tmp_path)])
    assert result.exit_code == 1 and "holds no sessions.jsonl" in result.output


# -- SIGKILL at random points ------------------------------------------------------------


def command(external: Path, out: Path, delay: float) -> list[str]:
    tasks = external / "agentbench/data/dbbench/standard.jsonl"
    return [
        sys.executable, "-m", "lifelong_gym", "run", "--no-progress",
        "--tasks", str(tasks), "--output", str(out), "--max-tasks", "300",
        "--callback", f"tests.crash_support.Saboteur:every=3,delay={delay}",
    ]  # fmt: skip


def test_sigkill_at_random_points_loses_at_most_one_session_per_kill(tmp_path, external_dir):
    # the saboteur's delay is not part of the run's identity in a real run, but it is a
    # callback argument here, so both runs use the same one
    delay = 0.002
    reference = tmp_path / "reference"
    subprocess.run(command(external_dir, reference, delay), cwd=ROOT, check=True)
    out = tmp_path / "killed"
    sessions = out / "sessions.jsonl"
    kills = kill_until_done(command(external_dir, out, delay), ROOT, sessions, 20261201, 0.04)
    assert kills >= 20
    final = sessions.read_bytes()
    assert final == (reference / "sessions.jsonl").read_bytes()
    indices = [json.loads(line)["task_index"] for line in final.splitlines()]
    assert len(indices) == len(set(indices)) == 300
    for name in ("metrics.json", "state.json"):
        assert json.loads((out / name).read_text()) == json.loads((reference / name).read_text())


def test_build_image_reports_the_existing_image_or_a_clear_error():
    result = CliRunner().invoke(main, ["build-image", "os"])
    if image_exists(DEFAULT_IMAGE):
        assert result.exit_code == 0 and result.output.strip() == DEFAULT_IMAGE
    else:
        assert result.exit_code == 1 and "Error:" in result.output
    result = CliRunner().invoke(main, ["build-image", "windows"])
    assert result.exit_code == 1 and "'windows' is not one of 'mysql', 'os'" in result.output


def test_generate_forwards_to_each_environments_generator(tmp_path):
    out = tmp_path / "db.jsonl"
    args = ["generate", "db", "--count", "25", "--seed", "3", "--output", str(out), "--mysql", ""]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert len(load_db_tasks(out)) == 25
    assert sorted(json.loads((tmp_path / "db.order.json").read_text())) == list(range(25))
    result = CliRunner().invoke(main, ["generate", "sql"])
    assert result.exit_code == 1 and "No such command 'sql'" in result.output


def test_python_dash_m_is_the_same_command():
    done = subprocess.run(
        [sys.executable, "-m", "lifelong_gym", "compare", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and "Compare runs" in done.stdout
