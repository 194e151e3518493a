"""`lifelong-gym compare`: two runs of a predictable agent, with and without replay."""

from __future__ import annotations

import gymnasium as gym
from click.testing import CliRunner

import lifelong_gym  # noqa: F401 - registers the ids
from lifelong_gym.cli import main
from lifelong_gym.run import ExperienceReplayCallback, Runner
from tests.methods.skill_recall import SkillRecallAgent, labelled_task_file, predict, seeds_of

ORDER = ["alpha", "beta"] * 6


def test_compare_prints_the_gain_and_writes_one_plot(tmp_path):
    env = gym.make("LifelongDB-v0", tasks=str(labelled_task_file(tmp_path, ORDER)))
    agent = SkillRecallAgent(env.unwrapped.tasks, seeds_of(ORDER))
    for name, n in (("plain", 0), ("replay", 2)):
        callbacks = [ExperienceReplayCallback(n=n)]
        Runner(env, agent, callbacks, tmp_path / name, progress=False, plots=False).run()
    env.close()
    plot = tmp_path / "cmp.png"
    result = CliRunner().invoke(
        main, ["compare", str(tmp_path / "plain"), str(tmp_path / "replay"), "--plot", str(plot)]
    )
    assert result.exit_code == 0, result.output
    plain, replay = predict(ORDER, 0, "recent") / 12, predict(ORDER, 2, "recent") / 12
    overall = next(line for line in result.output.splitlines() if line.startswith("overall"))
    assert overall.split()[1:] == [
        f"{plain:.1%}",
        f"{replay:.1%}",
        f"({(replay - plain) * 100:+.1f})",
    ]
    assert plot.is_file() and plot.stat().st_size > 1000


def test_compare_names_a_folder_that_is_not_a_run(tmp_path):
    result = CliRunner().invoke(main, ["compare", str(tmp_path)])
    assert result.exit_code != 0 and "holds no sessions.jsonl" in result.output
