"""The gain over a stateless run: the paired bootstrap, real twins, report, compare, the CLI."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest
from click.testing import CliRunner

import lifelong_gym  # noqa: F401 - registers the ids
from lifelong_gym.cli import main
from lifelong_gym.errors import ConfigError
from lifelong_gym.results.gain import paired_bootstrap, paired_gain, twin_folder, twin_gain
from lifelong_gym.results.run_record import load_run
from lifelong_gym.run import ExperienceReplayCallback, RunConfig, Runner, run_with_twin

from ..methods.skill_recall import SkillRecallAgent, labelled_task_file, predict, seeds_of

ORDER = ["alpha", "beta", "gamma"] * 5


def test_the_bootstrap_interval_of_known_paired_samples():
    assert paired_bootstrap([1.0] * 30) == (1.0, 1.0)
    assert paired_bootstrap([0.0] * 30) == (0.0, 0.0)
    assert paired_bootstrap([-1.0, -1.0]) == (-1.0, -1.0)
    half = [1.0, 0.0] * 100  # mean 0.5, standard error 0.0354: 1.96 of them is 0.069
    low, high = paired_bootstrap(half)
    assert low == pytest.approx(0.5 - 0.069, abs=0.01) and high == pytest.approx(0.569, abs=0.01)
    assert paired_bootstrap(half) == (low, high)  # seeded
    skewed = [1.0] * 9 + [0.0]  # resamples of all ten draw 9/10 on average
    assert paired_bootstrap(skewed) == (0.7, 1.0)
    with pytest.raises(ValueError):
        paired_bootstrap([])


def skill_recall_runs(folder, callbacks, order=ORDER):
    """The skill-recall agent (it solves a task only with a same-label task replayed) with
    `callbacks` into `folder`, and alone into its twin folder."""
    tasks = folder.parent / f"{folder.name}-tasks"
    tasks.mkdir()
    env = gym.make("LifelongDB-v0", tasks=str(labelled_task_file(tasks, order)))
    agent = SkillRecallAgent(env.unwrapped.tasks, seeds_of(order))
    for output, methods in ((folder, callbacks), (twin_folder(folder), [])):
        Runner(env, agent, methods, output=output, progress=False, plots=False).run()
    env.close()
    return load_run(folder)


def test_a_method_that_helps_gains_beyond_noise_and_the_agent_alone_does_not(tmp_path):
    run = skill_recall_runs(tmp_path / "replay", [ExperienceReplayCallback(n=3)])
    gain = twin_gain(run)
    solved, alone = predict(ORDER, 3, "recent"), predict(ORDER, 0, "recent")
    assert (solved, alone) == (15, 3)
    assert gain.overall.tasks == 15
    assert gain.overall.gain == pytest.approx((solved - alone) / 15)
    assert gain.overall.low > 0 and not gain.overall.within_noise
    twin = load_run(twin_folder(run.folder))
    differences = [  # in the stream's order, the order the bootstrap draws from
        float(s.outcome == "correct") - float(t.outcome == "correct")
        for s, t in zip(run.sessions, twin.sessions, strict=True)
    ]
    assert (gain.overall.low, gain.overall.high) == paired_bootstrap(differences)
    assert sorted(gain.per_skill) == ["alpha", "beta", "gamma"]
    assert all(f.tasks == 5 and f.gain == pytest.approx(4 / 5) for f in gain.per_skill.values())

    same = paired_gain(run, run)  # a run against itself: nothing gained, within noise
    assert (same.overall.gain, same.overall.low, same.overall.high) == (0, 0, 0)
    assert same.overall.within_noise

    report = CliRunner().invoke(main, ["report", str(run.folder)])
    assert report.exit_code == 0, report.output
    overall = next(line for line in report.output.splitlines() if line.startswith("overall"))
    low, high = gain.overall.low * 100, gain.overall.high * 100
    assert overall.split() == ["overall", "15", "100.0%", "20.0%", "+80.0", f"[{low:+.1f},"] + [
        f"{high:+.1f}]"
    ]
    page = (run.folder / "report.html").read_text()
    assert "Gain over the stateless run" in page and "id='cost'" in page


def test_runs_of_other_streams_have_no_paired_gain(tmp_path):
    first = skill_recall_runs(tmp_path / "one", [])
    other = skill_recall_runs(tmp_path / "two", [], order=["beta", "alpha", "gamma"] * 5)
    with pytest.raises(ConfigError, match="did not run the same task stream"):
        paired_gain(first, other)
    result = CliRunner().invoke(main, ["compare", str(first.folder), str(other.folder)])
    assert result.exit_code == 0, result.output
    (line,) = [line for line in result.stdout.splitlines() if line.startswith("gain of A over B")]
    assert "no paired gain" in line and "did not run the same task stream" in line


def test_a_run_with_its_twin_from_python(tmp_path, capsys):
    config = RunConfig(output=tmp_path / "replay", max_tasks=4, progress=False, plots=False,
                       callbacks=["experience_replay:n=1"], stateless_baseline=True)  # fmt: skip
    played = run_with_twin(config)
    assert [folder for folder, _ in played] == [config.output, config.output / "stateless"]
    assert [metrics.sessions for _, metrics in played] == [4, 4]
    assert "gain over the stateless run" in capsys.readouterr().out


def test_the_stateless_baseline_end_to_end(tmp_path):
    out = tmp_path / "replay"
    args = ["run", "--output", str(out), "--max-tasks", "6", "--no-progress"]
    args += ["--callback", "experience_replay:n=2", "--stateless-baseline"]
    args += ["--price-per-mtok", "0.15,0.6"]
    for _attempt in range(2):  # the second resumes both runs, which are done
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output
        overall = next(line for line in result.output.splitlines() if line.startswith("overall"))
        assert overall.split()[1:] == ["6", "100.0%", "100.0%", "+0.0", "[+0.0,", "+0.0]"] + [
            "within",
            "noise",
        ]
    twin = out / "stateless"
    for folder in (out, twin):
        assert len((folder / "sessions.jsonl").read_text().splitlines()) == 6
        assert len((folder / "costs.jsonl").read_text().splitlines()) == 6
    config = json.loads((twin / "config.json").read_text())
    assert config["callbacks"] == [] and config["user"]["callbacks"] == []
    stateful = json.loads((out / "config.json").read_text())
    assert config["tasks"] == stateful["tasks"] and config["seed"] == stateful["seed"]
    assert [json.loads(x)["task_index"] for x in (twin / "sessions.jsonl").open()] == [
        json.loads(x)["task_index"] for x in (out / "sessions.jsonl").open()
    ]
    page = tmp_path / "cmp.html"
    result = CliRunner().invoke(main, ["compare", str(out), str(twin), "--html", str(page)])
    assert result.exit_code == 0, result.output
    assert "gain of A over B (A - B)" in result.output
    memory = next(line for line in result.output.splitlines() if line.startswith("memory /"))
    assert memory.split()[-1] == "0.0" and float(memory.split()[-2].replace(",", "")) > 0
    html = page.read_text()
    assert "Gain of A over B" in html and "Cost per task" in html and "within noise" in html
