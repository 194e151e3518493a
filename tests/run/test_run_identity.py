"""A run's identity: its tasks and graph by content, its paths absolute, and one-line
errors from the user's own callbacks and repeated settings."""

from __future__ import annotations

import gzip
import json
import shutil
import tempfile
from pathlib import Path

import pytest

from lifelong_gym.agents import make_agent
from lifelong_gym.envs.db.tasks import load_db_tasks
from lifelong_gym.errors import AgentSpecError, CallbackError
from lifelong_gym.results.folder import read_sessions
from lifelong_gym.results.run_record import RunIdentity
from lifelong_gym.results.task_reference import load_references
from lifelong_gym.run import Runner
from lifelong_gym.tasks import DATA_DIR
from tests.command_line import assert_one_line_error, invoke_run, run_cli

from .callback_faults import BrokenSetup

ROOT = Path(__file__).resolve().parents[2]
SHIPPED_DB = DATA_DIR / "db" / "default.jsonl"
SHIPPED_GRAPH = DATA_DIR / "kg" / "graph.nt.gz"


def task_file(path: Path, count: int = 8) -> Path:
    """The first `count` tasks of the shipped DB set, as a task file of their own."""
    path.write_text("".join(SHIPPED_DB.read_text().splitlines(keepends=True)[:count]))
    return path


def edit_instructions(path: Path) -> None:
    """Every task's instruction reworded (the oracle still solves them)."""
    records = [json.loads(line) for line in path.read_text().splitlines()]
    for record in records:
        record["instruction"] = "Please: " + record["instruction"]
    path.write_text("".join(json.dumps(record) + "\n" for record in records))


def session_count(folder: Path) -> int:
    return len(read_sessions(folder / "sessions.jsonl")[0])


# -- tasks and graph by content ------------------------------------------------------------


def test_a_resume_over_edited_tasks_is_refused_in_one_line_naming_the_file(tmp_path):
    tasks, out = task_file(tmp_path / "tasks.jsonl"), tmp_path / "run"
    assert (
        invoke_run("--tasks", str(tasks), "--output", str(out), "--max-tasks", "3").exit_code == 0
    )
    edit_instructions(tasks)
    result = invoke_run("--tasks", str(tasks), "--output", str(out), "--max-tasks", "6")
    assert result.exit_code == 1
    assert f"Error: the tasks in {tasks} changed since this run started (content hash " in (
        result.output
    )
    assert "--overwrite" in result.output and len(result.output.strip().splitlines()) == 1
    assert session_count(out) == 3  # nothing of the new texts mixed in


def test_a_resume_over_an_edited_probe_set_is_refused(tmp_path):
    tasks, probes = task_file(tmp_path / "tasks.jsonl"), task_file(tmp_path / "probes.jsonl", 2)
    out = tmp_path / "run"
    flags = ["--tasks", str(tasks), "--output", str(out), "--probes", str(probes)]
    flags += ["--probe-every", "2"]
    assert invoke_run(*flags, "--max-tasks", "2").exit_code == 0
    edit_instructions(probes)
    result = invoke_run(*flags, "--max-tasks", "4")
    assert result.exit_code == 1
    assert f"the probe tasks in {probes} changed since this run started" in result.output
    assert session_count(out) == 2


def test_a_resume_over_an_edited_graph_is_refused(tmp_path):
    # tasks that record no graph (the benchmark's own) play on any graph: the run keeps its hash
    pytest.importorskip("pyoxigraph")
    graph, tasks, out = tmp_path / "graph.nt.gz", tmp_path / "tasks.jsonl", tmp_path / "run"
    shutil.copyfile(SHIPPED_GRAPH, graph)
    records = [json.loads(line) for line in (SHIPPED_GRAPH.parent / "default.jsonl").open()]
    tasks.write_text("".join(json.dumps({**r, "graph_sha256": ""}) + "\n" for r in records[:3]))
    flags = ["--env", "LifelongKG-v0", "--tasks", str(tasks), "--env-arg", f"graph={graph}"]
    flags += ["--output", str(out)]
    assert invoke_run(*flags, "--max-tasks", "2").exit_code == 0
    triples = gzip.decompress(graph.read_bytes()) + b"<http://x/a> <http://x/b> <http://x/c> .\n"
    graph.write_bytes(gzip.compress(triples))
    result = invoke_run(*flags, "--max-tasks", "3")
    assert result.exit_code == 1
    assert f"the graph in {graph} changed since this run started" in result.output


# -- paths: stored absolute, compared by content --------------------------------------------


def test_a_relative_task_path_is_stored_absolute_and_the_same_file_resumes_by_any_path(
    tmp_path, monkeypatch
):
    here = tmp_path / "here"
    here.mkdir()
    tasks = task_file(here / "tasks.jsonl")
    monkeypatch.chdir(here)
    out = tmp_path / "run"
    assert (
        invoke_run("--tasks", "tasks.jsonl", "--output", str(out), "--max-tasks", "2").exit_code
        == 0
    )
    config = json.loads((out / "config.json").read_text())
    assert config["user"]["tasks"] == str(tasks) and config["env_kwargs"]["tasks"] == str(tasks)
    by_absolute = invoke_run("--tasks", str(tasks), "--output", str(out), "--max-tasks", "4")
    assert by_absolute.exit_code == 0, by_absolute.output
    copy = shutil.copyfile(tasks, tmp_path / "copy.jsonl")
    by_copy = invoke_run("--tasks", str(copy), "--output", str(out), "--max-tasks", "5")
    assert by_copy.exit_code == 0, by_copy.output
    assert session_count(out) == 5
    monkeypatch.chdir(tmp_path)  # the report of the run, from another working folder
    references = load_references(
        RunIdentity.of_folder(out), read_sessions(out / "sessions.jsonl")[0]
    )
    assert references.note is None and len(references.tasks) == 5
    assert all(task["reference"] for task in references.tasks.values())


def test_a_run_written_before_content_hashes_resumes_by_its_path_made_absolute(
    tmp_path, monkeypatch
):
    """A config.json with the task path as typed and no `content` (what 0.1 to 0.3 wrote)."""
    tasks = task_file(tmp_path / "tasks.jsonl")
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "run"
    assert (
        invoke_run("--tasks", "tasks.jsonl", "--output", "run", "--max-tasks", "2").exit_code == 0
    )
    config = json.loads((out / "config.json").read_text())
    config.pop("content", None)
    config["user"]["tasks"] = config["env_kwargs"]["tasks"] = "tasks.jsonl"
    (out / "config.json").write_text(json.dumps(config))
    resumed = invoke_run("--tasks", str(tasks), "--output", "run", "--max-tasks", "3")
    assert resumed.exit_code == 0, resumed.output
    assert session_count(out) == 3
    assert "content" in json.loads((out / "config.json").read_text())  # hashed from now on


def test_a_shipped_set_by_name_and_by_its_file_are_the_same_run(tmp_path):
    out = tmp_path / "run"
    assert invoke_run("--output", str(out), "--max-tasks", "2").exit_code == 0
    by_file = invoke_run("--tasks", str(SHIPPED_DB), "--output", str(out), "--max-tasks", "3")
    assert by_file.exit_code == 0, by_file.output
    by_name = invoke_run("--tasks", "default", "--output", str(out), "--max-tasks", "4")
    assert by_name.exit_code == 0, by_name.output
    assert session_count(out) == 4


def test_other_tasks_by_another_path_are_still_another_run(tmp_path):
    out = tmp_path / "run"
    assert invoke_run("--output", str(out), "--max-tasks", "2").exit_code == 0
    other = task_file(tmp_path / "other.jsonl")
    edit_instructions(other)
    result = invoke_run("--tasks", str(other), "--output", str(out), "--max-tasks", "3")
    assert result.exit_code == 1
    assert f"the tasks in {other} (content hash" in result.output
    assert f"are not the tasks this run started with, in {SHIPPED_DB}" in result.output


# -- the user's callbacks failing outside a session -------------------------------------------


def callback_run(out: Path, callback: str, tasks: int) -> object:
    spec = f"tests.run.callback_faults.{callback}"
    args = ["run", "--output", str(out), "--max-tasks", str(tasks), "--no-progress"]
    return run_cli(*args, "--callback", spec, cwd=ROOT)


def temp_log_of(line: str) -> Path:
    log = Path(line.rsplit("(traceback in ", 1)[1].removesuffix(")"))
    assert log.parent == Path(tempfile.gettempdir()), line
    return log


def test_a_callback_whose_load_state_raises_on_resume_is_one_line(tmp_path):
    out = tmp_path / "run"
    assert callback_run(out, "Forgetful", 2).returncode == 0
    result = callback_run(out, "Forgetful", 3)
    log = out / "run.log"
    assert_one_line_error(
        result,
        "Error: callback tests.run.callback_faults.Forgetful: load_state raised KeyError: "
        f"'memory' (traceback in {log})",
    )
    assert "Traceback" in log.read_text() and "raise KeyError" in log.read_text()
    assert session_count(out) == 2


@pytest.mark.parametrize(
    ("callback", "raised"),
    [
        ("RefusesToStart", "__init__ raised ValueError: no memory size given"),
        ("BrokenSetup", "setup raised RuntimeError: the index is not built"),
    ],
)
def test_a_new_run_whose_callback_raises_is_one_line_and_leaves_no_folder(
    tmp_path, callback, raised
):
    result = callback_run(tmp_path / "runs" / "new", callback, 2)
    assert_one_line_error(
        result, f"callback tests.run.callback_faults.{callback}: {raised} (traceback in "
    )
    log = temp_log_of(result.stderr.strip())
    assert "Traceback" in log.read_text() and raised.split(": ")[0].split()[-1] in log.read_text()
    log.unlink()
    assert not (tmp_path / "runs").exists()


def test_python_users_catch_a_callback_error(tmp_path):
    import gymnasium as gym

    env = gym.make("LifelongDB-v0")
    agent = make_agent("oracle", env.unwrapped.tasks)
    runner = Runner(env, agent, [BrokenSetup()], output=tmp_path / "run", progress=False)
    with pytest.raises(CallbackError, match="BrokenSetup: setup raised RuntimeError") as caught:
        runner.run()
    env.close()
    assert isinstance(caught.value.__cause__, RuntimeError)
    temp_log_of(str(caught.value)).unlink()
    assert not (tmp_path / "run").exists()


# -- a key given twice -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--callback", "experience_replay:n=4,n=5"], "'n' is given twice (4 and 5)"),
        (["--env-arg", "max_turns=3", "--env-arg", "max_turns=4"], "'max_turns' is given twice"),
        (["--agent", "hf:/no/model?max_new_tokens=8&max_new_tokens=9"], "is given twice"),
    ],
)
def test_a_key_given_twice_is_refused(tmp_path, flags, message):
    result = invoke_run("--output", str(tmp_path / "run"), "--max-tasks", "1", *flags)
    assert result.exit_code == 1 and message in result.output, result.output
    assert len(result.output.strip().splitlines()) == 1


def test_an_agent_spec_with_a_key_given_twice_names_it():
    with pytest.raises(AgentSpecError, match="'temperature' is given twice"):
        make_agent("hf:/no/model?temperature=0&temperature=1", load_db_tasks())
