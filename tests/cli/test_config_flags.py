"""`lifelong-gym run` has one flag per field of `RunConfig`, made from the field."""

from __future__ import annotations

import click
import pytest
from pydantic import BaseModel, Field

from lifelong_gym.cli import main
from lifelong_gym.cli.config_flags import flag_settings, model_flags
from lifelong_gym.cli.run import run
from lifelong_gym.errors import RunConfigError
from lifelong_gym.run.config import RunConfig, run_config

#: the flags users' scripts and docs/runner.md use: their names do not change
DOCUMENTED = [
    "--config", "--env", "--agent", "--output", "--tasks", "--env-arg", "--max-tasks",
    "--callback", "--plugin", "--order", "--seed", "--replicates", "--max-consecutive-failures",
    "--concurrency", "--ray", "--overwrite", "--retry-errors", "--no-progress",
    "--stateless-baseline", "--price-per-mtok", "--probe-every", "--probes", "--only",
]  # fmt: skip


def test_every_field_of_the_run_config_is_a_flag():
    names = {param.name for param in run.params}
    assert set(RunConfig.model_fields) - names == set()
    assert names - set(RunConfig.model_fields) == {"config_path", "only"}


def test_the_documented_flags_keep_their_names():
    flags = {flag for param in run.params for flag in param.opts}
    assert [flag for flag in DOCUMENTED if flag not in flags] == []


def settings_of(*args: str) -> RunConfig:
    """The config `lifelong-gym run ARGS` would play, without playing it."""
    # with the group's settings: click keeps the first help option it makes on the command
    context = run.make_context("run", ["--output", "out", *args], **main.context_settings)
    flags = flag_settings(RunConfig, context.params)
    return run_config({}, {k: v for k, v in flags.items() if k not in ("config_path", "only")})


def test_the_flags_that_had_none_set_their_fields():
    config = settings_of(
        "--model", "{name: small, backend: hf, path: /models/small}",
        "--model", "{name: big, backend: hf, path: /models/big}",
        "--ray-resource", "CPU=2", "--ray-resource", "memory=1.5",
        "--max-skipped-interactions", "4", "--no-plots", "--window", "7", "--metrics-every", "3",
    )  # fmt: skip
    assert [m["name"] for m in config.models] == ["small", "big"]
    assert config.ray_resources == {"CPU": 2.0, "memory": 1.5}
    assert (config.max_skipped_interactions, config.plots) == (4, False)
    assert (config.window, config.metrics_every) == (7, 3)


def test_flags_not_given_leave_the_defaults():
    assert settings_of() == RunConfig(output="out")


def test_a_bad_mapping_item_is_one_line_naming_its_flag():
    with pytest.raises(RunConfigError, match="^--ray-resource 'CPU' is not key=value"):
        settings_of("--ray-resource", "CPU")


def test_a_new_field_is_a_new_flag():
    class Settings(BaseModel):
        retries: int = Field(3, description="tries before giving up")
        dry_run: bool = Field(False, description="print what would run")
        tags: list[str] = Field(default_factory=list, description="labels of the run")

    command = click.Command("x", params=model_flags(Settings))
    help_text = command.get_help(click.Context(command))
    assert "--retries INTEGER" in help_text and "Tries before giving up (default 3)." in help_text
    assert "--dry-run" in help_text and "--tag TEXT" in help_text
