"""A user's mistake is one line `Error: ...` that names the fix, never a traceback."""

from __future__ import annotations

import importlib
import json
import os
import socket
import subprocess
import sys

import pytest
from click.testing import CliRunner

from lifelong_gym.cli import main
from lifelong_gym.errors import LifelongGymError
from lifelong_gym.results.folder import RunDirectory
from tests.command_line import assert_one_line_error, run_cli


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize(
    ("env_args", "fragments"),
    [
        (["backend=postgres"], ["backend='postgres'", "sqlite, mysql"]),
        (["max_turns=abc"], ["max_turns must be an integer", "'abc'"]),
        (["statement_timeout=soon"], ["statement_timeout must be a number"]),
        (["no_such_argument=1"], ["no argument 'no_such_argument'", "max_turns"]),
        (["backend=sqlite", "url=mysql://x"], ["takes no url"]),
    ],
)
def test_bad_env_arguments(tmp_path, env_args, fragments):
    flags = [item for arg in env_args for item in ("--env-arg", arg)]
    result = run_cli("run", "--output", str(tmp_path / "run"), *flags)
    assert_one_line_error(result, *fragments)


def test_a_missing_graph_file_is_one_line_like_a_missing_task_file(tmp_path):
    pytest.importorskip("pyoxigraph")
    kg = ["run", "--env", "LifelongKG-v0", "--output", str(tmp_path), "--env-arg"]
    graph = run_cli(*kg, "graph=/nonexistent.nt")
    assert_one_line_error(graph, "graph='/nonexistent.nt' is not a file", "N-Triples")
    tasks = run_cli(*kg, "tasks=/nonexistent.jsonl")
    assert_one_line_error(tasks, "/nonexistent.jsonl' is neither a file")


@pytest.mark.parametrize("name", ["default", "mine"])  # graph.nt.gz, mine.graph.nt.gz
def test_a_generated_kg_set_is_played_on_the_graph_beside_it(tmp_path, name):
    """Not silently on the shipped graph, where the oracle scored 0% and the run exited 0."""
    pytest.importorskip("pyoxigraph")
    made = run_cli(
        "generate", "kg", "--count", "8", "--scale", "0.1", "--seed", "3", "--name", name,
        "--output", str(tmp_path),
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    graph = tmp_path / ("graph.nt.gz" if name == "default" else f"{name}.graph.nt.gz")
    assert graph.is_file()
    tasks = tmp_path / f"{name}.jsonl"
    out = tmp_path / "run"
    result = run_cli(
        "run", "--env", "LifelongKG-v0", "--tasks", str(tasks), "--output", str(out),
        "--no-progress",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    said = [line for line in result.stderr.splitlines() if "graph" in line]
    assert len(said) == 1 and str(graph) in said[0] and "graph= names another" in said[0]
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["sessions"] == 8 and metrics["success_rate"] == 1.0


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("output: x\nenv: [a\nagent: oracle\n", "expected ',' or ']', but got ':' at line 3"),
        ("output: x\n  env: LifelongDB-v0\n", "mapping values are not allowed here at line 2"),
    ],
)
def test_a_yaml_syntax_error_is_one_line_with_its_place(tmp_path, text, problem):
    config = tmp_path / "run.yaml"
    config.write_text(text)
    result = run_cli("run", "--config", str(config))
    assert_one_line_error(result, f"config {config} is not YAML: {problem}")


def test_an_unknown_env_id_suggests_a_whole_registered_id(tmp_path):
    for wrong in ("LifelongOs-v0", "LifelongOS"):
        result = run_cli("run", "--env", wrong, "--output", str(tmp_path))
        assert_one_line_error(result, f"env {wrong!r}", "did you mean 'LifelongOS-v0'?")


def without_openenv(tmp_path) -> dict[str, str]:
    """An environment in which `import openenv` fails as it does where it is not installed."""
    package = tmp_path / "blocked" / "openenv"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'openenv'\", name='openenv')\n"
    )
    return {**os.environ, "PYTHONPATH": str(package.parent)}


def test_serve_and_the_openenv_client_name_the_extra_they_need(tmp_path):
    assert "pip install 'lifelong-gym[openenv]'" in CliRunner().invoke(main, ["serve", "-h"]).output
    env = without_openenv(tmp_path)
    served = subprocess.run(
        [sys.executable, "-m", "lifelong_gym", "serve", "--port", str(free_port())],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert_one_line_error(served, "openenv is missing", "pip install 'lifelong-gym[openenv]'")
    client = subprocess.run(
        [sys.executable, "-c", "from lifelong_gym.integrations.openenv import LifelongEnvClient"],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    last = client.stderr.strip().splitlines()[-1]  # an import in the user's code: a traceback
    assert last.startswith("lifelong_gym.errors.MissingExtraError: "), last
    assert "LifelongEnvClient" in last and "lifelong-gym[openenv]" in last


def test_an_unreachable_mysql_server(tmp_path, mysql_url):
    url = f"mysql://root@127.0.0.1:{free_port()}"
    result = run_cli(
        "run", "--output", str(tmp_path), "--env-arg", "backend=mysql", "--env-arg", f"url={url}"
    )
    assert_one_line_error(result, "cannot connect to MySQL", "check that the server runs")


def test_a_sparql_endpoint_that_does_not_answer_is_refused_at_start(tmp_path):
    pytest.importorskip("SPARQLWrapper")
    url = f"http://127.0.0.1:{free_port()}/sparql"
    result = run_cli(
        "run",
        "--env",
        "LifelongKG-v0",
        "--output",
        str(tmp_path),
        "--env-arg",
        "backend=sparql",
        "--env-arg",
        f"url={url}",
    )
    assert_one_line_error(result, url, "start the endpoint")
    assert not (tmp_path / "sessions.jsonl").exists()
    no_url = run_cli(
        "run", "--env", "LifelongKG-v0", "--output", str(tmp_path), "--env-arg", "backend=sparql"
    )
    assert_one_line_error(no_url, "needs url=")


def test_an_os_image_that_does_not_exist_names_the_tag_asked_for(tmp_path, docker_engine):
    tag = "lifelong-gym/os:no-such-tag"
    result = run_cli(
        "run", "--env", "LifelongOS-v0", "--output", str(tmp_path), "--env-arg", f"image={tag}"
    )
    assert_one_line_error(result, f"build-image os --name {tag}", f"docker build -t {tag}")
    assert ":latest" not in result.stderr
    assert result.stderr.count("build-image") == 1


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ("experience_replay:n=four", "n must be an integer, got 'four'"),
        ("experience_replay:budget=[1]", "budget must be an integer or text"),
        ("experience_replay:size=3", "no argument 'size'"),
        ("embedding_replay:strategy=bogus", "one of 'recent', 'relevant', 'embedding'"),
        ("experience_replay:count_tokens=3", "count_tokens takes a Python function"),
        ("workflow_memory:model=1", "model must be a language model"),
        ("no_such_method", "no callback named 'no_such_method'"),
        ("group_self_consistency", "has none"),  # the oracle has no model to vote with
    ],
)
def test_bad_callbacks(tmp_path, spec, fragment):
    result = run_cli("run", "--output", str(tmp_path), "--callback", spec)
    assert_one_line_error(result, fragment)


def test_a_busy_folder_is_refused_before_the_model_loads(tmp_path):
    """`hf:` of a folder with no model would fail while loading; the lock must come first."""
    folder = RunDirectory(tmp_path / "run")  # another run holds the lock
    try:
        result = run_cli(
            "run", "--output", str(tmp_path / "run"), "--agent", f"hf:{tmp_path / 'no-model'}"
        )
    finally:
        folder.close()
    assert_one_line_error(result, "is in use by another run")


def test_a_changed_config_is_refused_before_the_model_loads(tmp_path):
    out = str(tmp_path / "run")
    first = run_cli("run", "--output", out, "--max-tasks", "2", "--no-progress")
    assert first.returncode == 0, first.stderr
    again = run_cli("run", "--output", out, "--agent", f"hf:{tmp_path / 'no-model'}")
    assert_one_line_error(again, "another config", "user.agent: 'oracle' ->", "--overwrite")


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["report", "{tmp}"], "holds no sessions.jsonl"),
        (["compare", "{tmp}", "{tmp}"], "holds no sessions.jsonl"),
        (["compare", "{tmp}"], "compare needs two or more runs"),
        (["generate", "kg", "--output", "{tmp}/tasks.txt"], "neither a folder nor a .jsonl"),
        (["serve", "--env-arg", "max_turns=abc"], "max_turns must be an integer"),
    ],
)
def test_every_command_prints_the_suites_errors_as_one_line(tmp_path, args, fragment):
    """The command group catches `LifelongGymError` once, for every command."""
    result = run_cli(*(arg.format(tmp=tmp_path) for arg in args))
    assert_one_line_error(result, fragment)


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (["run", "--output", "{tmp}/file"], ["'--output'", "is a file", "run -h"]),
        (["report", "/nonexistent"], ["'/nonexistent' does not exist", "report -h"]),
        (["run", "--order", "weird"], ["'weird' is not one of 'sample', 'shuffled'"]),
        (["run", "--no-such-flag"], ["No such option '--no-such-flag'", "run -h"]),
        (["--no-such-flag"], ["No such option '--no-such-flag'"]),
        (["export", "sft"], ["Missing option '--out'", "export sft -h"]),
        (["build-image", "windows"], ["'windows' is not one of 'mysql', 'os'"]),
    ],
)
def test_clicks_usage_errors_are_the_same_one_line_and_exit_code(tmp_path, args, fragments):
    """Not Click's `Usage:` block with exit code 2: `Error: ...`, exit code 1, like the rest."""
    (tmp_path / "file").write_text("")
    result = run_cli(*(arg.format(tmp=tmp_path) for arg in args))
    assert_one_line_error(result, *fragments)


@pytest.mark.parametrize("args", [[], ["generate"], ["export"]])
def test_a_group_without_its_command_prints_its_help_with_the_same_exit_code(args):
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1 and result.output.startswith("Usage:")  # and the commands


@pytest.mark.parametrize(
    "command", ["run", "report", "compare", "generate", "build-image", "serve"]
)
def test_dash_h_works_on_every_command(command):
    result = CliRunner().invoke(main, [command, "-h"])
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.output


def test_every_public_error_is_a_lifelong_gym_error():
    import lifelong_gym.errors as errors

    classes = [
        value
        for value in vars(errors).values()
        if isinstance(value, type) and issubclass(value, Exception)
    ]
    assert len(classes) >= 19
    assert all(issubclass(c, LifelongGymError) for c in classes)
    from lifelong_gym.envs.db.backends import BackendError as DBBackendError
    from lifelong_gym.envs.kg.backends import BackendError as KGBackendError

    assert DBBackendError is KGBackendError is errors.BackendError  # two became one


# Every public error class of 0.1.0 (before errors.py), by the module that defined it; the
# run layer's four moved with their modules into lifelong_gym/run/ and results/.
ERRORS_BEFORE = {
    "agents.base": ["AgentError", "AgentContextLimitError", "AgentOutOfMemoryError"],
    "agents.factory": ["AgentSpecError"],
    "agents.models.config": ["ModelConfigError"],
    "envs.db.backends.base": ["BackendError"],
    "envs.kg.actions": ["ActionError"],
    "envs.kg.backends": ["QueryTimeout", "BackendError"],
    "envs.kg.sexpr": ["SExprError"],
    "envs.kg.sparql": ["InvalidArgument"],
    "envs.os.actions": ["ActionError"],
    "envs.os.backends.sandbox": ["SandboxError"],
    "envs.os.image": ["ImageBuildError"],
    "methods.budget": ["BudgetError"],
    "tasks": ["TaskFileError"],
    "run.registry": ["CallbackSpecError"],  # was lifelong_gym.callbacks
    "run.config": ["RunConfigError"],  # was lifelong_gym.run_config
    "run.runner": ["RunAbortedError"],  # was lifelong_gym.runner
    "results.folder": ["RunDirectoryError"],  # was lifelong_gym.snapshots
}


@pytest.mark.parametrize("module", sorted(ERRORS_BEFORE))
def test_the_errors_of_before_are_importable_where_they_were_and_under_the_base(module):
    imported = importlib.import_module(f"lifelong_gym.{module}")
    for name in ERRORS_BEFORE[module]:
        assert issubclass(getattr(imported, name), LifelongGymError), name
