"""A grid config: environments x methods from one file, each cell a resumable run folder."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from lifelong_gym.cli import main
from lifelong_gym.results.gain import paired_bootstrap
from lifelong_gym.run.config import read_config_file
from lifelong_gym.run.grid import load_grid
from tests.command_line import invoke_run

PAPER_GRID = Path(__file__).resolve().parents[2] / "examples/configs/paper_grid.yaml"

GRID = {
    "max-tasks": 3,
    "grid": {
        "envs": {"db": {"env": "LifelongDB-v0"}, "kg": {"env": "LifelongKG-v0"}},
        "methods": {"standard": [], "replay-1": ["experience_replay:n=1"]},
    },
}
CELLS = ["db/standard", "db/replay-1", "kg/standard", "kg/replay-1"]


def write_grid(tmp_path: Path, grid: dict | None = None) -> Path:
    config = tmp_path / "grid.yaml"
    config.write_text(
        yaml.safe_dump({"output": str(tmp_path / "grid"), **(grid or GRID)}, sort_keys=False)
    )
    return config


def run(config: Path, *flags: str):
    return invoke_run("--config", str(config), *flags)


def sessions(folder: Path) -> dict[str, bytes]:
    return {cell: (folder / cell / "sessions.jsonl").read_bytes() for cell in CELLS}


def test_every_cell_runs_into_its_folder_and_a_rerun_skips_finished_cells(tmp_path):
    config = write_grid(tmp_path)
    result = run(config)
    assert result.exit_code == 0, result.output
    for number, cell in enumerate(CELLS, start=1):
        assert f"cell {number}/4 {cell}: running into" in result.output
    folder = tmp_path / "grid"
    index = json.loads((folder / "grid.json").read_text())
    assert index["reference"] == "standard"
    assert [c["folder"] for c in index["cells"]] == CELLS
    for cell in CELLS:
        saved = json.loads((folder / cell / "config.json").read_text())
        assert saved["env"] == ("LifelongDB-v0" if cell.startswith("db") else "LifelongKG-v0")
        replay = ["experience_replay:n=1"] if cell.endswith("replay-1") else []
        assert saved["user"]["callbacks"] == replay
    before = sessions(folder)
    assert all(len(lines.splitlines()) == 3 for lines in before.values())

    result = run(config)
    assert result.exit_code == 0, result.output
    assert result.output.count("finished already, skipped") == 4
    assert "running into" not in result.output
    assert sessions(folder) == before

    result = run(config, "--only", "db/replay-*", "--max-tasks", "5")  # flags win over the file
    assert result.exit_code == 0, result.output
    assert "cell 1/1 db/replay-1: running into" in result.output
    after = sessions(folder)
    assert len(after["db/replay-1"].splitlines()) == 5
    assert after["db/replay-1"].startswith(before["db/replay-1"])  # resumed, not redone
    assert {cell: after[cell] for cell in CELLS if cell != "db/replay-1"} == {
        cell: before[cell] for cell in CELLS if cell != "db/replay-1"
    }


def test_a_changed_cell_is_run_not_skipped_and_refuses_to_resume(tmp_path):
    config = write_grid(tmp_path)
    assert run(config, "--only", "kg/standard").exit_code == 0
    changed = {**GRID, "grid": {**GRID["grid"], "envs": {"kg": {"env": "LifelongKG-v0",
               "env_args": {"max_turns": 4}}}}}  # fmt: skip
    result = run(write_grid(tmp_path, changed), "--only", "kg/standard")
    assert result.exit_code == 1
    assert "running into" in result.output and "user.env_args.max_turns" in result.output


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"methods": {"standard": [], "bad": ["experience_replay:m=1"]}},
         "grid cell db/bad: callback experience_replay takes no argument 'm'"),
        ({"envs": {"db": {"env": "LifelongDB-v0"}, "kg": {"env": "LifelongKG-v0",
                                                          "env_args": {"colour": 1}}}},
         "grid cell kg/standard: env LifelongKG-v0 takes no argument 'colour'"),
        ({"envs": {"db": {"env": "LifelongDB-v0", "max_tasks": 0}}},
         "grid cell db/standard: max_tasks: Input should be greater than or equal to 1"),
        ({"envs": {"db": {"env": "LifelongDB-v0", "output": "x"}}},
         "grid cell db/standard: grid.envs.db sets output; a cell's folder is OUTPUT/db/standard"),
        ({"methods": {"standard": [], "x": {"agent": "gpt-9"}}},
         "grid cell db/x: unknown agent 'gpt-9'; known agents: oracle"),
        ({"methods": {"a/b": []}}, "grid name 'a/b': a name is a folder's"),
        ({"envs": {"kg": {"max_tasks": 2}}},
         "grid.envs.kg names no environment: give its env id (env: ...)"),
        ({"methods": {"x": {"env": "LifelongKG-v0"}}},
         "grid.methods.x sets env; the environments are grid.envs'"),
        ({"methods": {}}, "invalid grid: methods: Dictionary should have at least 1 item"),
        ({"methods": {"x": "experience_replay"}}, "invalid grid: methods.x"),
    ],
)  # fmt: skip
def test_a_bad_cell_is_one_line_naming_it_before_any_cell_runs(tmp_path, change, message):
    config = write_grid(tmp_path, {**GRID, "grid": {**GRID["grid"], **change}})
    result = run(config)
    assert result.exit_code == 1
    assert message in result.output, result.output
    assert "Traceback" not in result.output and "running into" not in result.output
    assert not (tmp_path / "grid").exists()


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--only", "os"], "--only os picks no cell; the grid's cells: db/standard, db/replay-1"),
        (["--env", "LifelongOS-v0"], "--env does not go with a grid config"),
        (["--callback", "experience_replay"], "--callback does not go with a grid config"),
    ],
)
def test_flags_that_do_not_fit_a_grid_are_one_line(tmp_path, flags, message):
    result = run(write_grid(tmp_path), *flags)
    assert result.exit_code == 1 and message in result.output, result.output
    assert not (tmp_path / "grid").exists()


def test_only_belongs_to_grid_configs(tmp_path):
    result = CliRunner().invoke(main, ["run", "--output", str(tmp_path), "--only", "db"])
    assert result.exit_code == 1
    assert "--only picks cells of a grid config" in result.output


def compare(*args: str):
    return CliRunner().invoke(main, ["compare", *args], catch_exceptions=False)


def summary_row(output: str, env: str, method: str) -> list[str]:
    """The cells of a method's row in an environment's summary table."""
    block = output.split(f"{env}: ", 1)[1]
    line = next(line for line in block.splitlines() if line.split()[:1] == [method])
    return re.split(r"\s{2,}", line.strip())  # the columns, two spaces or more apart


def test_compare_of_a_grid_folder_sums_up_each_environment_against_standard(tmp_path):
    methods = {
        "standard": [],
        "replay-1": ["experience_replay:n=1"],
        "sabotage": ["tests.crash_support.Saboteur:every=2"],  # fails the even task indices
    }
    config = write_grid(
        tmp_path, {**GRID, "max-tasks": 4, "grid": {**GRID["grid"], "methods": methods}}
    )
    assert run(config, "--only", "db", "--only", "kg/standard").exit_code == 0
    folder = tmp_path / "grid"
    html = tmp_path / "pages" / "grid.html"
    html.parent.mkdir()
    result = compare(str(folder), "--html", str(html))
    assert result.exit_code == 0, result.output
    assert "db: LifelongDB-v0, gains over standard" in result.output
    assert "kg: LifelongKG-v0, fewer than two cells have run" in result.output
    assert "not run yet: replay-1, sabotage" in result.output

    standard = [json.loads(line) for line in (folder / "db/standard/sessions.jsonl").open()]
    sabotaged = [json.loads(line) for line in (folder / "db/sabotage/sessions.jsonl").open()]
    assert [s["task_index"] for s in standard] == [s["task_index"] for s in sabotaged]
    lost = sum(s["task_index"] % 2 == 0 for s in standard)
    assert 0 < lost < 4  # the comparison has a gain to show, with an interval around it
    solved = 4 - lost
    row = summary_row(result.output, "db", "sabotage")
    assert row[:3] == ["sabotage", "4", f"{solved / 4:.1%}"]
    assert row[4] == f"{-lost / 4 * 100:+.1f}"  # the paired gain over standard, in points
    differences = [-float(s["task_index"] % 2 == 0) for s in standard]
    low, high = paired_bootstrap(differences)
    assert row[5].startswith(f"[{low * 100:+.1f}, {high * 100:+.1f}]")  # its interval
    assert summary_row(result.output, "db", "standard")[2:6] == [
        "100.0%",
        "[51.0%, 100.0%]",
        "-",
        "-",
    ]
    assert summary_row(result.output, "db", "replay-1")[4:6] == [
        "+0.0",
        "[+0.0, +0.0] within noise",
    ]
    assert "C  sabotage" in result.output and "C (Δ)" in result.output  # the per-skill table
    assert (folder / "db" / "comparison.png").is_file()

    page = html.read_text()
    assert "db: LifelongDB-v0, gains over standard" in page and "sabotage" in page
    assert "href='grid-db.html'" in page
    db_page = (tmp_path / "pages" / "grid-db.html").read_text()
    assert "standard" in db_page and "sabotage" in db_page
    assert (folder / "db/sabotage/report.html").is_file()


def test_compare_of_ordinary_runs_is_unchanged_and_a_damaged_index_is_one_line(tmp_path):
    assert run(write_grid(tmp_path), "--only", "db").exit_code == 0
    folder = tmp_path / "grid"
    result = compare(str(folder / "db/standard"), str(folder / "db/replay-1"))
    assert result.exit_code == 0 and "gain of A over B" in result.output
    (folder / "grid.json").write_text("{}")
    result = compare(str(folder))
    assert result.exit_code == 1 and "grid.json is not a grid's index" in result.output
    assert "Traceback" not in result.output


def test_the_paper_grid_parses_and_every_cell_validates():
    grid = load_grid(read_config_file(PAPER_GRID), {})
    methods = ["standard", "replay-1", "replay-4", "replay-16", "replay-32", "replay-64",
               "self-consistency", "reasoning-memory", "online-training"]  # fmt: skip
    assert [cell.name for cell in grid.cells] == [
        f"{env}/{method}" for env in ("db", "os", "kg") for method in methods
    ]
    assert grid.reference == "standard"
    envs = {cell.config.env for cell in grid.cells}
    assert envs == {"LifelongDB-v0", "LifelongOS-v0", "LifelongKG-v0"}
    for cell in grid.cells:
        assert cell.config.agent == "hf:smollm2" and cell.config.max_tasks == 100
        assert cell.config.output == Path("runs/paper-grid") / cell.env / cell.method
        for spec in cell.config.callbacks:  # replay and voting kept within the context
            if spec.startswith(("experience_replay", "group_self_consistency")):
                assert "budget=auto" in spec
    replay = [c.config.callbacks for c in grid.cells if c.env == "db" and "replay" in c.method]
    assert replay == [[f"experience_replay:n={n},budget=auto"] for n in (1, 4, 16, 32, 64)]


def test_the_paper_grid_runs_end_to_end_with_a_tiny_model(tmp_path, tiny_model_dir):
    picked = ["db/standard", "db/replay-64", "db/self-consistency", "kg/standard",
              "kg/reasoning-memory"]  # fmt: skip
    flags = ["--agent", f"hf:{tiny_model_dir}?max_new_tokens=8", "--max-tasks", "2",
             "--output", str(tmp_path / "grid")]  # fmt: skip
    for cell in picked:
        flags += ["--only", cell]
    result = run(PAPER_GRID, *flags)
    assert result.exit_code == 0, result.output
    assert "grid of 27 cells" in result.output and "cell 5/5 kg/reasoning-memory" in result.output
    for cell in picked:
        assert len((tmp_path / "grid" / cell / "sessions.jsonl").read_text().splitlines()) == 2
    costs = [
        json.loads(line) for line in (tmp_path / "grid/db/self-consistency/costs.jsonl").open()
    ]
    assert all(cost["agent"]["prompt_tokens"] > 0 for cost in costs)  # a real model answered

    result = run(PAPER_GRID, *flags)
    assert result.output.count("finished already, skipped") == 5, result.output

    result = compare(str(tmp_path / "grid"), "--html", str(tmp_path / "grid.html"))
    assert result.exit_code == 0, result.output
    assert "db: LifelongDB-v0, gains over standard" in result.output
    assert (
        "not run yet: replay-1, replay-4, replay-16, replay-32, reasoning-memory, online-training"
        in result.output
    )
    for env, method in [
        ("db", "replay-64"),
        ("db", "self-consistency"),
        ("kg", "reasoning-memory"),
    ]:
        row = summary_row(result.output, env, method)
        assert row[1] == "2" and row[4][0] in "+-" and row[5][0] == "["  # a paired gain
        assert float(row[6].replace(",", "")) > 0  # prompt tokens per task
    assert "os: LifelongOS-v0, fewer than two cells have run" in result.output
    assert (tmp_path / "grid-db.html").is_file() and (tmp_path / "grid-kg.html").is_file()
