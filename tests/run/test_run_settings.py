"""The runner's settings: one validated object or keyword fields, a bad one one line."""

from __future__ import annotations

import json

import pytest

from lifelong_gym.errors import RunConfigError
from lifelong_gym.results.folder import RunDirectory
from lifelong_gym.run import Runner, RunSettings
from tests.arithmetic_env import PatternAgent, SumEnv


def run_in(*args, **kwargs) -> Runner:
    env = SumEnv()
    runner = Runner(env, PatternAgent(env.tasks, wrong={1}), [], *args, **kwargs)
    runner.run()
    return runner


def test_a_settings_object_and_keyword_fields_make_the_same_run(tmp_path):
    settings = RunSettings(
        output=tmp_path / "a", max_tasks=4, order="shuffled", seed=3, progress=False, plots=False
    )
    by_object = run_in(settings)
    by_fields = run_in(
        output=tmp_path / "b", max_tasks=4, order="shuffled", seed=3, progress=False, plots=False
    )
    config = [json.loads((tmp_path / name / "config.json").read_text()) for name in "ab"]
    assert config[0] == config[1]
    assert [s.task_index for s in by_object.history] == [s.task_index for s in by_fields.history]
    assert by_object.settings == by_fields.settings.model_copy(update={"output": tmp_path / "a"})


def test_fields_go_on_top_of_a_settings_object(tmp_path):
    runner = run_in(RunSettings(max_tasks=5, progress=False), max_tasks=2)
    assert len(runner.history) == 2 and runner.settings.progress is False


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"max_tasks": 0}, "max_tasks"),
        ({"concurrency": 0}, "concurrency"),
        ({"order": "backwards"}, "order"),
        ({"max_taks": 3}, "max_taks"),
    ],
)
def test_a_bad_field_is_one_line_that_names_it(fields, named):
    env = SumEnv()
    with pytest.raises(RunConfigError) as error:
        Runner(env, PatternAgent(env.tasks), **fields)
    message = str(error.value)
    assert message.startswith("invalid run settings: ") and named in message
    assert "\n" not in message


@pytest.mark.parametrize(
    ("args", "fields", "named"),
    [
        (("runs/x",), {}, "not a str: give the output folder as output=PATH"),
        ((), {"output_dir": "runs/x"}, "output_dir"),
        ((), {"config": {"lr": 1}}, "config"),
    ],
)
def test_arguments_the_runner_does_not_take_are_one_line_that_names_them(args, fields, named):
    env = SumEnv()
    with pytest.raises(RunConfigError, match=named) as error:
        Runner(env, PatternAgent(env.tasks), [], *args, **fields)
    assert "\n" not in str(error.value)


def test_an_open_folder_goes_as_folder(tmp_path):
    runner = run_in(folder=RunDirectory(tmp_path / "y"), max_tasks=2, progress=False)
    assert runner.output_dir == tmp_path / "y"
    assert (tmp_path / "y" / "sessions.jsonl").exists()


def test_the_runner_prints_no_report(tmp_path, capsys):
    run_in(output=tmp_path / "run", max_tasks=3, progress=False)
    assert capsys.readouterr().out == ""
