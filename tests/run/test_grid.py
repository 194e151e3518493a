"""A grid config: environments x methods from one file, each cell a resumable run folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from lifelong_gym.cli import main

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
    return CliRunner().invoke(
        main, ["run", "--no-progress", "--config", str(config), *flags], catch_exceptions=False
    )


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
        ({"methods": {"a/b": []}}, "grid name 'a/b': a name is a folder's"),
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
    return line.split()


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
    assert row[5] == f"{-lost / 4 * 100:+.1f}"  # the paired gain over standard, in points
    assert row[6].startswith("[") and "within noise" in result.output
    assert summary_row(result.output, "db", "standard")[2] == "100.0%"
    assert summary_row(result.output, "db", "replay-1")[5] == "+0.0"
    assert "skill" in result.output and "sabotage (Δ)" in result.output  # the per-skill table
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
