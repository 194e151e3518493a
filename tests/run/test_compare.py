"""`lifelong-gym compare`: runs of a predictable agent, with and without replay."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest
from click.testing import CliRunner

import lifelong_gym  # noqa: F401 - registers the ids
from lifelong_gym.cli import main
from lifelong_gym.envs.db.tasks import load_db_tasks
from lifelong_gym.errors import RunConfigError
from lifelong_gym.orders import task_order
from lifelong_gym.results.folder import replicates_in
from lifelong_gym.run import ExperienceReplayCallback, Runner
from lifelong_gym.run.config import load_run_config
from lifelong_gym.tasks import DATA_DIR

from ..arithmetic_env import PatternAgent, SumEnv
from ..methods.skill_recall import SkillRecallAgent, labelled_task_file, predict, seeds_of

ORDER = ["alpha", "beta"] * 6


def replay_runs(folder, names=("plain", "replay"), order=ORDER):
    """Runs of the skill-recall agent with replay of 0, 2, ... experiences, one per name."""
    tasks = folder / "tasks"
    tasks.mkdir(exist_ok=True)
    env = gym.make("LifelongDB-v0", tasks=str(labelled_task_file(tasks, order)))
    agent = SkillRecallAgent(env.unwrapped.tasks, seeds_of(order))
    for i, name in enumerate(names):
        callbacks = [ExperienceReplayCallback(n=2 * i)]
        Runner(env, agent, callbacks, output=folder / name, progress=False, plots=False).run()
    env.close()
    return [folder / name for name in names]


def compare(*args):
    return CliRunner().invoke(main, ["compare", *map(str, args)])


def run(*args):
    return CliRunner().invoke(main, ["run", *map(str, args)])


def test_compare_prints_the_gain_and_writes_one_plot(tmp_path):
    plain, replay = replay_runs(tmp_path)
    plot = tmp_path / "cmp.png"
    result = compare(plain, replay, "--plot", plot)
    assert result.exit_code == 0, result.output
    assert result.stderr == ""  # the same environment and task stream: no warning
    expected = predict(ORDER, 0, "recent") / 12, predict(ORDER, 2, "recent") / 12
    overall = next(line for line in result.output.splitlines() if line.startswith("overall"))
    assert overall.split()[1:] == [
        f"{expected[0]:.1%}",
        f"{expected[1]:.1%}",
        f"({(expected[1] - expected[0]) * 100:+.1f})",
    ]
    assert plot.is_file() and plot.stat().st_size > 1000


def test_compare_shows_long_and_clashing_names_whole(tmp_path):
    long = ["org-model-a-7b-instruct-replay-16", "org-model-b-8b-instruct-replay-16"]
    first, second = replay_runs(tmp_path, long)
    result = compare(first, second)
    assert result.exit_code == 0, result.output
    key = {line.split()[0]: line.split()[1] for line in result.stdout.splitlines()[:2]}
    assert key == {"A": long[0], "B": long[1]}
    header = next(line for line in result.stdout.splitlines() if line.startswith("skill"))
    assert header.split()[1:] == ["A", "B", "(Δ)"]

    (tmp_path / "x").mkdir()
    (tmp_path / "y").mkdir()
    a = replay_runs(tmp_path / "x", ["run"])[0]
    b = replay_runs(tmp_path / "y", ["run"])[0]
    result = compare(a, b)
    key = {line.split()[0]: line.split()[1] for line in result.stdout.splitlines()[:2]}
    assert key == {"A": "x/run", "B": "y/run"}


def test_compare_warns_about_other_task_streams_and_refuses_other_environments(tmp_path):
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    first = replay_runs(tmp_path / "one", ["run"])[0]
    other_order = replay_runs(tmp_path / "two", ["run"], order=["beta", "alpha"] * 6)[0]
    result = compare(first, other_order)
    assert result.exit_code == 0, result.output
    assert "warning: the runs saw different task sets or orders" in result.stderr

    sums = tmp_path / "sums"
    env = SumEnv()
    Runner(env, PatternAgent(env.tasks), [], output=sums, progress=False, plots=False).run()
    result = compare(first, sums, "--plot", tmp_path / "cmp.png")
    assert result.exit_code == 1
    assert result.output.splitlines() == [
        "Error: the runs are of different environments (A: LifelongDB-v0, B: SumEnv); "
        "compare runs of one environment"
    ]
    assert not (tmp_path / "cmp.png").exists()


def test_default_plots_are_named_after_the_runs_and_not_shared(tmp_path):
    plain, replay, more = replay_runs(tmp_path, ("plain", "replay", "more"))
    outputs = [compare(plain, replay), compare(plain, more)]
    plots = [r.output.splitlines()[-1].removeprefix("wrote ") for r in outputs]
    assert plots == [
        str(tmp_path / "comparison_plain_vs_replay.png"),
        str(tmp_path / "comparison_plain_vs_more.png"),
    ]
    assert all((tmp_path / p).is_file() for p in plots)
    assert not (tmp_path / "comparison.png").exists()


def test_compare_names_a_folder_that_is_not_a_run(tmp_path):
    result = compare(tmp_path, tmp_path)
    assert result.exit_code != 0 and "holds no sessions.jsonl" in result.output


def test_compare_refuses_one_run_alone(tmp_path):
    (run,) = replay_runs(tmp_path, ["run"])
    result = compare(run)
    assert result.exit_code == 1 and "compare needs two or more runs" in result.output
    assert "lifelong-gym report RUN" in result.output
    assert not list(tmp_path.glob("comparison*.png"))


def test_compare_reads_a_folder_of_replicates_as_its_runs(tmp_path):
    lines = (DATA_DIR / "db" / "default.jsonl").read_text(encoding="utf-8").splitlines()
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("\n".join(lines[:6]) + "\n", encoding="utf-8")
    flags = ["--tasks", tasks, "--order", "shuffled", "--seed", "3", "--no-progress"]
    result = run(*flags, "--replicates", "3", "--output", tmp_path / "r")
    assert result.exit_code == 0, result.output
    folders = [tmp_path / "r" / f"seed-{seed}" for seed in (3, 4, 5)]
    assert [f"results in {folder}" in result.output for folder in folders] == [True] * 3
    task_set = load_db_tasks(str(tasks))
    orders = []
    for seed, folder in zip((3, 4, 5), folders, strict=True):
        assert json.loads((folder / "config.json").read_text())["seed"] == seed
        sessions = (folder / "sessions.jsonl").read_text(encoding="utf-8").splitlines()
        orders.append([json.loads(line)["task_index"] for line in sessions])
        assert orders[-1] == task_order(task_set, "shuffled", seed)  # `--seed N` alone
    assert len({tuple(order) for order in orders}) == 3

    result = compare(tmp_path / "r")
    assert result.exit_code == 0, result.output
    assert result.stderr == ""  # replicates differ in the seed only: no warning
    assert f"{tmp_path / 'r'}: 3 replicates (A, B, C), success mean 100.0%" in result.stdout
    assert [line.split()[1] for line in result.stdout.splitlines()[:3]] == [
        "seed-3",
        "seed-4",
        "seed-5",
    ]


def test_only_seed_n_folders_are_replicates(tmp_path):
    """A folder of replicates holds OUTPUT/seed-N runs; runs named otherwise are not theirs."""
    for name in ("seed-2", "seed-10", "7", "seed-x"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "sessions.jsonl").write_text("", encoding="utf-8")
    assert replicates_in(tmp_path) == [tmp_path / "seed-2", tmp_path / "seed-10"]
    assert replicates_in(tmp_path / "seed-2") == []  # a run is not a folder of replicates


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--replicates", "2"], 'replicates of order="sample" would all be one order'),
        (["--order", "shuffled", "--replicates", "2"], 'order="shuffled" needs a seed'),
        (["--order", "blocks"], 'order="blocks" needs a seed'),
    ],
)
def test_a_stream_that_cannot_repeat_is_refused_before_anything_runs(tmp_path, flags, message):
    result = run("--output", tmp_path / "r", *flags)
    lines = result.output.splitlines()
    assert result.exit_code == 1 and len(lines) == 1, result.output
    assert lines[0].startswith("Error: ") and message in lines[0]
    assert not (tmp_path / "r").exists()


def test_a_yaml_config_names_every_order_and_plans_the_replicates(tmp_path):
    config = tmp_path / "run.yaml"
    config.write_text("order: blocks\nseed: 1\nreplicates: 2\n", encoding="utf-8")
    runs = load_run_config(config, {"output": tmp_path / "r"}).replicate_runs()
    assert [(r.seed, r.output) for r in runs] == [
        (1, tmp_path / "r/seed-1"),
        (2, tmp_path / "r/seed-2"),
    ]
    assert "replicates" not in runs[0].identity()  # a larger K resumes the runs made
    config.write_text("order: weird\n", encoding="utf-8")
    with pytest.raises(RunConfigError, match="order: Input should be 'sample', 'shuffled', "):
        load_run_config(config, {"output": tmp_path / "r"})
