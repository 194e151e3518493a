"""Probes through a real DB environment: a planted learner's matrix and measures, exactly,
on blocked and random streams, and again after SIGKILLs and resume."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import gymnasium as gym
import pytest
from click.testing import CliRunner

from lifelong_gym.agents import OracleAgent
from lifelong_gym.cli import main
from lifelong_gym.envs.db.tasks import load_db_tasks
from lifelong_gym.errors import RunDirectoryError
from lifelong_gym.orders import task_order
from lifelong_gym.results.folder import PROBES_FILE, SESSIONS_FILE
from lifelong_gym.results.probe_display import format_probes, run_probes
from lifelong_gym.results.probe_measures import load_probes, probe_measures
from lifelong_gym.results.report import report_run
from lifelong_gym.results.run_record import load_run
from lifelong_gym.run import Runner
from tests.command_line import invoke_run
from tests.crash_support import kill_until_done

from .browser import OpenPage, file_url
from .planted import K, M, planted_runner

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "lifelong_gym/data/db/default.jsonl"
EVERY = 5


@pytest.fixture(scope="module")
def task_files(tmp_path_factory) -> tuple[Path, Path]:
    """A stream of 40 shipped DB tasks and a probe set of 12 others."""
    folder = tmp_path_factory.mktemp("tasks")
    lines = SHIPPED.read_text(encoding="utf-8").splitlines(keepends=True)
    stream, probes = folder / "stream.jsonl", folder / "probes.jsonl"
    stream.write_text("".join(lines[:40]), encoding="utf-8")
    probes.write_text("".join(lines[200:212]), encoding="utf-8")
    return stream, probes


def stream_skills(stream: Path, order: str, seed: int) -> list[list[str]]:
    tasks = load_db_tasks(stream)
    return [list(tasks[index].skills) for index in task_order(tasks, order, seed)]


def planted_matrix(skills: list[list[str]], probes: Path) -> dict[int, dict[str, float]]:
    """The matrix the rule plants, by hand: at point p the learner has seen skills[:p]."""
    probe_skills = [list(task.skills) for task in load_db_tasks(probes)]
    matrix = {}
    for point in range(0, len(skills) + 1, EVERY):

        def knows(skill: str, point: int = point) -> bool:
            seen = [i for i, task in enumerate(skills[:point]) if skill in task]
            return len(seen) >= K and point - (seen[-1] + 1) < M

        solved = defaultdict(list)
        for task in probe_skills:
            for skill in task:
                solved[skill].append(float(all(knows(s) for s in task)))
        matrix[point] = {skill: math.fsum(v) / len(v) for skill, v in solved.items()}
    return matrix


def expected_measures(matrix, skills):
    """Forgetting, BWT, FWT and AULC of a matrix, written out plainly."""
    points = sorted(matrix)
    final = points[-1]
    forgetting = {s: max(matrix[p][s] for p in points[:-1]) - matrix[final][s] for s in matrix[0]}
    backward, forward = {}, {}
    for skill in matrix[0]:
        where = [i for i, task in enumerate(skills) if skill in task]
        if not where:
            continue
        after = [p for p in points if p >= where[-1] + 1]
        if after:
            backward[skill] = matrix[final][skill] - matrix[after[0]][skill]
        before = [p for p in points if p <= where[0]]
        forward[skill] = matrix[before[-1]][skill] - matrix[0][skill]
    aulc = math.fsum(math.fsum(row.values()) / len(row) for row in matrix.values()) / len(matrix)
    return forgetting, backward, forward, aulc


def assert_recovered(folder: Path, skills: list[list[str]], probes: Path) -> None:
    matrix = planted_matrix(skills, probes)
    measures = probe_measures(load_probes(folder), skills)
    forgetting, backward, forward, aulc = expected_measures(matrix, skills)
    assert measures.matrix == matrix
    assert measures.forgetting == forgetting
    assert measures.backward == backward
    assert measures.forward == forward
    assert measures.aulc == aulc


@pytest.mark.parametrize(("order", "seed"), [("blocks", 3), ("shuffled", 5)])
def test_the_planted_rule_is_recovered_exactly(tmp_path, task_files, order, seed):
    stream, probes = task_files
    runner = planted_runner(tmp_path / "run", stream, probes, order, seed, EVERY)
    metrics = runner.run()
    skills = stream_skills(stream, order, seed)
    assert_recovered(tmp_path / "run", skills, probes)
    measures = probe_measures(load_probes(tmp_path / "run"), skills)
    # the stream shows what the probes measure: skills learnt, and some lost again
    assert max(measures.forgetting.values()) > 0 and min(measures.backward.values()) < 0
    # a skill is learnt from its own tasks only, so the rule plants no forward transfer
    assert set(measures.forward.values()) == {0.0}
    never_streamed = set(measures.skills) - {s for task in skills for s in task}
    assert never_streamed.isdisjoint(measures.backward) and never_streamed.isdisjoint(
        measures.forward
    )
    # the probes count nowhere in the stream: not in its record, metrics, costs or callbacks
    assert len((tmp_path / "run" / SESSIONS_FILE).read_text().splitlines()) == 40
    assert len((tmp_path / "run" / "costs.jsonl").read_text().splitlines()) == 40
    assert sum(metrics.status_counts.values()) == 40
    assert runner.agent.finished == 40
    assert len(load_probes(tmp_path / "run")) == 9 * 12


def command(out: Path, stream: Path, probes: Path, delay: float, kill: int = 0) -> list[str]:
    arguments = [out, stream, probes, "blocks", 3, EVERY, delay, *([kill] if kill else [])]
    return [sys.executable, "-m", "tests.run.planted", *map(str, arguments)]


def test_a_kill_inside_a_probe_point_neither_loses_nor_doubles_it(tmp_path, task_files):
    stream, probes = task_files
    reference = tmp_path / "reference"
    subprocess.run(command(reference, stream, probes, 0.0), cwd=ROOT, check=True)
    out = tmp_path / "killed"
    for kill in (17, 30, 12):  # in the second point; the fifth; the first point's last task
        killed = subprocess.run(command(out, stream, probes, 0.0, kill), cwd=ROOT)
        assert killed.returncode == -9
    subprocess.run(command(out, stream, probes, 0.0), cwd=ROOT, check=True)
    for name in (PROBES_FILE, SESSIONS_FILE, "state.json"):
        assert (out / name).read_bytes() == (reference / name).read_bytes(), name
    assert_recovered(out, stream_skills(stream, "blocks", 3), probes)


def test_sigkill_at_random_points_keeps_every_probe_point_once(tmp_path, task_files):
    stream, probes = task_files
    out = tmp_path / "killed"
    kills = kill_until_done(
        command(out, stream, probes, 0.003), ROOT, out / SESSIONS_FILE, 20261204, 0.3
    )
    assert kills >= 3
    records = [json.loads(line) for line in (out / PROBES_FILE).read_text().splitlines()]
    assert [(r["point"], r["task_index"]) for r in records] == [
        (point, task) for point in range(0, 41, EVERY) for task in range(200, 212)
    ]
    assert_recovered(out, stream_skills(stream, "blocks", 3), probes)


def test_a_reordered_probe_record_is_refused(tmp_path, task_files):
    stream, probes = task_files
    planted_runner(tmp_path / "run", stream, probes, "blocks", 3, EVERY).run()
    path = tmp_path / "run" / PROBES_FILE
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join([lines[1], lines[0], *lines[2:]]))
    with pytest.raises(RunDirectoryError, match="probes.jsonl:1 is task 201 at point 0"):
        planted_runner(tmp_path / "run", stream, probes, "blocks", 3, EVERY).run()


def test_report_and_compare_show_the_matrix_and_the_measures(tmp_path, task_files):
    stream, probes = task_files
    folder = tmp_path / "run"
    planted_runner(folder, stream, probes, "blocks", 3, EVERY).run()
    measures = probe_measures(load_probes(folder), stream_skills(stream, "blocks", 3))
    report = CliRunner().invoke(main, ["report", str(folder)], catch_exceptions=False)
    assert report.exit_code == 0, report.output
    assert f"AULC (mean accuracy over points and skills) {measures.aulc:.1%}" in report.output
    skill = max(measures.forgetting, key=measures.forgetting.get)
    table = report.output.split("probes: accuracy at each probe point")[1].splitlines()
    row = next(line for line in table if line.startswith(skill + " "))
    cells = row.split()[1:]
    assert cells[:9] == [f"{measures.matrix[p][skill]:.0%}" for p in measures.points]
    assert cells[9] == f"{measures.forgetting[skill] * 100:+.1f}"
    page = (folder / "report.html").read_text(encoding="utf-8")
    assert page.count("class='num heat'") == sum(len(row) for row in measures.matrix.values())
    assert f"<strong class='aulc'>{measures.aulc:.1%}</strong>" in page
    html = tmp_path / "compare.html"
    args = ["compare", str(folder), str(folder), "--html", str(html)]
    compared = CliRunner().invoke(main, args, catch_exceptions=False)
    assert compared.exit_code == 0, compared.output
    assert compared.output.count("probes: accuracy at each probe point") == 2
    assert html.read_text(encoding="utf-8").count("probe-matrix") == 2


def test_a_run_without_probes_shows_none(tmp_path, task_files):
    stream, _ = task_files
    env = gym.make("LifelongDB-v0", tasks=str(stream))
    Runner(env, OracleAgent(env.unwrapped.tasks), [], output=tmp_path / "run", max_tasks=3,
           progress=False, plots=False).run()  # fmt: skip
    report = CliRunner().invoke(main, ["report", str(tmp_path / "run")], catch_exceptions=False)
    assert "AULC" not in report.output
    assert "probe-matrix" not in (tmp_path / "run" / "report.html").read_text(encoding="utf-8")


def test_the_cli_probes_the_oracle_and_its_stateless_twin(tmp_path, task_files):
    stream, probes = task_files
    out = tmp_path / "run"
    flags = ["--tasks", str(stream), "--max-tasks", "8", "--output", str(out)]
    flags += ["--callback", "experience_replay:n=2"]
    probing = ["--probes", str(probes), "--probe-every", "4"]
    result = invoke_run(*flags, *probing, "--stateless-baseline")
    assert result.exit_code == 0, result.output
    for folder in (out, out / "stateless"):
        records = load_probes(folder)
        assert [r.point for r in records] == [0] * 12 + [4] * 12 + [8] * 12
        assert {r.reward for r in records} == {1.0}  # the oracle plays the probe set's answers
    assert json.loads((out / "config.json").read_text())["probes"]["count"] == 12
    measures = format_probes(run_probes(load_run(out)))  # printed at the end, as report does
    assert "AULC" in measures and result.output.rstrip().endswith(measures)
    # another probe schedule is another run: refused, in one line
    result = invoke_run(*flags, "--probes", str(probes), "--probe-every", "2")
    assert result.exit_code == 1 and "probes.every: 4 -> 2" in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--probe-every", "3"], "--probe-every N and --probes PATH go together"),
        (["--probes", "{probes}"], "--probe-every N and --probes PATH go together"),
        (["--probes", "{probes}", "--probe-every", "0"], "probe_every: Input should be greater"),
        (["--probes", "/no/such.jsonl", "--probe-every", "3"], "--probes /no/such.jsonl: "),
    ],
)
def test_bad_probe_settings_are_one_line(tmp_path, task_files, args, message):
    stream, probes = task_files
    args = [a.format(probes=probes) for a in args]
    result = invoke_run("--tasks", str(stream), "--output", str(tmp_path / "run"), *args)
    assert result.exit_code == 1 and message in result.output
    assert len(result.output.strip().splitlines()) == 1 and "Traceback" not in result.output


def test_the_heatmap_shows_in_a_browser(browser, tmp_path, task_files):
    stream, probes = task_files
    folder = tmp_path / "run"
    planted_runner(folder, stream, probes, "blocks", 3, EVERY).run()
    report_run(folder)
    page = OpenPage(browser, file_url(folder / "report.html"))
    try:
        cells = page.page.locator(".probe-matrix td.heat")
        colours = {
            cells.nth(i).inner_text(): cells.nth(i).evaluate(
                "c => getComputedStyle(c).backgroundColor"
            )
            for i in range(cells.count())
        }
        assert colours["0%"] != colours["100%"] and cells.nth(0).is_visible()
        assert page.errors == [] and page.outside_requests() == []
        page.screenshot(tmp_path / "probes.png")
    finally:
        page.page.close()


def test_probes_in_flight_at_once_record_the_same(tmp_path, task_files):
    stream, probes = task_files
    planted_runner(tmp_path / "one", stream, probes, "shuffled", 5, EVERY).run()
    runner = planted_runner(tmp_path / "three", stream, probes, "shuffled", 5, EVERY, 0.0, 3)
    runner.run()
    assert len(runner.probes._more_envs) == 2  # three probes in flight at once
    runner.probes.close()
    one, three = (tmp_path / name / PROBES_FILE for name in ("one", "three"))
    assert three.read_bytes() == one.read_bytes()
    assert_recovered(tmp_path / "three", stream_skills(stream, "shuffled", 5), probes)
