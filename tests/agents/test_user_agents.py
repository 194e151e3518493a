"""A user's own agent (`--agent module:Class?key=value`) and plugins (`--plugin MODULE`, the
`lifelong_gym.plugins` entry points) from the command line: run, twin, replicates, grids."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from lifelong_gym.agents.factory import agent_builder
from lifelong_gym.errors import AgentSpecError
from tests.command_line import assert_one_line_error, run_cli

REPOSITORY = Path(__file__).resolve().parents[2]
USER = "tests.agents.user_agent"
SKIPPING_AGENT = f"{USER}:EveryOtherOracle?skip_every=2"


def sessions(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "sessions.jsonl").open()]


def assert_skips_even_tasks(folder: Path) -> None:
    played = sessions(folder)
    assert played
    for session in played:
        solved = session["outcome"] == "correct"
        assert solved == (session["task_index"] % 2 != 0), session["task_index"]


def counted(folder: Path) -> int:
    return json.loads((folder / "state.json").read_text())["callbacks"]["TaskCounter"]["count"]


def test_a_user_agent_and_a_plugin_callback_run_with_twin_and_replicates(tmp_path: Path):
    out = tmp_path / "run"
    result = run_cli(
        "run", "--agent", SKIPPING_AGENT, "--plugin", USER, "--callback", "user_counter:start=10",
        "--max-tasks", "4", "--order", "shuffled", "--seed", "0", "--replicates", "2",
        "--stateless-baseline", "--output", str(out), "--no-progress", cwd=REPOSITORY,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    for seed in (0, 1):
        folder = out / f"seed-{seed}"
        assert_skips_even_tasks(folder)
        assert_skips_even_tasks(folder / "stateless")  # the twin has the same agent
        assert counted(folder) == 14  # the plugin's callback, built with its argument
        config = json.loads((folder / "config.json").read_text())
        assert config["user"]["agent"] == SKIPPING_AGENT


def test_a_grid_cell_takes_a_user_agent_and_plugins_from_the_yaml(tmp_path: Path):
    grid = {
        "output": str(tmp_path / "grid"),
        "max-tasks": 2,
        "agent": SKIPPING_AGENT,
        "plugins": [USER],
        "grid": {
            "envs": {"db": {"env": "LifelongDB-v0"}},
            "methods": {"standard": [], "counted": ["user_counter:start=5"]},
        },
    }
    config = tmp_path / "grid.yaml"
    config.write_text(yaml.safe_dump(grid))
    result = run_cli("run", "--config", str(config), "--no-progress", cwd=REPOSITORY)
    assert result.returncode == 0, result.stderr
    for method in ("standard", "counted"):
        assert_skips_even_tasks(tmp_path / "grid" / "db" / method)
    assert counted(tmp_path / "grid" / "db" / "counted") == 7


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no_such_module_here:Agent", "cannot import module 'no_such_module_here'"),
        (f"{USER}:Missing", "has no 'Missing'"),
        (f"{USER}:NotAnAgent", "is not a Agent subclass"),
        (f"{USER}.NotAnAgent", "is not a Agent subclass"),
        (f"{USER}:EveryOtherOracle?colour=red", "takes no argument 'colour'"),
        (f"{USER}:EveryOtherOracle?skip_every=often", "skip_every must be an integer"),
        (f"{USER}:EveryOtherOracle?skip_every", "options must read"),
        (f"{USER}:EveryOtherOracle?tasks=1", "tasks is the run's task set"),
        (f"{USER}:NeedsGreeting", "missing a required argument: 'greeting'"),
        ("lifelong_gym.agents.base:Agent", "abstract"),
    ],
)
def test_a_bad_user_agent_spec_is_one_clear_error(spec: str, message: str):
    with pytest.raises(AgentSpecError, match=message):
        agent_builder(spec)


def test_a_bad_user_agent_is_one_line_before_anything_runs(tmp_path: Path):
    out = tmp_path / "run"
    result = run_cli("run", "--agent", f"{USER}:NotAnAgent", "--output", str(out), cwd=REPOSITORY)
    assert_one_line_error(result, "NotAnAgent is not a Agent subclass")
    assert not out.exists()


def test_a_plugin_that_does_not_import_is_one_line_naming_it(tmp_path: Path):
    (tmp_path / "broken_plugin.py").write_text("raise RuntimeError('half written')\n")
    out = tmp_path / "run"
    result = run_cli("run", "--plugin", "broken_plugin", "--output", str(out), path=tmp_path)
    assert_one_line_error(result, "plugin broken_plugin", "RuntimeError: half written")
    assert not out.exists()


def test_an_installed_plugin_is_loaded_by_its_entry_point(tmp_path: Path):
    site = tmp_path / "site"
    (site / "counting_plugin-1.0.dist-info").mkdir(parents=True)
    (site / "counting_plugin-1.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: counting-plugin\nVersion: 1.0\n"
    )
    (site / "counting_plugin-1.0.dist-info" / "entry_points.txt").write_text(
        "[lifelong_gym.plugins]\ncounting = counting_plugin\n"
    )
    (site / "counting_plugin.py").write_text(
        "from lifelong_gym.run import Callback, register_callback\n\n\n"
        '@register_callback("installed_counter")\n'
        "class InstalledCounter(Callback):\n"
        '    state_attributes = ("count",)\n\n'
        "    def __init__(self):\n"
        "        self.count = 0\n\n"
        "    def on_environment_complete(self, run, state, control, **kwargs):\n"
        "        self.count += 1\n"
    )
    out = tmp_path / "run"
    args = ["--callback", "installed_counter", "--max-tasks", "2", "--output", str(out)]
    result = run_cli("run", *args, "--no-progress", "--stateless-baseline", path=site)
    assert result.returncode == 0, result.stderr
    state = json.loads((out / "state.json").read_text())
    assert state["callbacks"]["InstalledCounter"]["count"] == 2
