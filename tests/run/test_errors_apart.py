"""Errors are reported apart from the agent's failures: the metrics, report, compare, gain,
HTML report and the exit code of `lifelong-gym run` (docs/runner.md, "What a number means")."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from lifelong_gym.cli import main
from lifelong_gym.metrics import LifelongMetrics, compute_metrics
from lifelong_gym.results.compare import format_runs, load_compared_runs, solved_by_one
from lifelong_gym.results.gain import format_gain, paired_gain
from lifelong_gym.results.html_report import report_page
from lifelong_gym.results.report import format_report
from lifelong_gym.results.run_record import load_run
from lifelong_gym.run import Runner
from lifelong_gym.session import (
    ERROR_STATUSES,
    JUDGED_STATUSES,
    EvaluationOutcome,
    Session,
    SessionStatus,
)
from tests.arithmetic_env import PatternAgent, SumEnv
from tests.command_line import invoke_run

from .test_runner import Raiser

OLD_METRICS = Path(__file__).resolve().parents[1] / "data" / "run-made-by-0.1.0" / "metrics.json"
BROKEN_CALLBACK = "tests.fault_points.BrokenWhile"
ROOT = Path(__file__).resolve().parents[2]


def run_sums(folder, agent=None, callbacks=()):
    env = SumEnv()
    agent = agent or PatternAgent(env.tasks, wrong={3})
    Runner(env, agent, callbacks, output=folder, progress=False, plots=False).run()
    return load_run(folder)


def test_every_status_is_judged_or_an_error_never_both():
    finished = set(SessionStatus) - {SessionStatus.INITIAL, SessionStatus.RUNNING}
    assert JUDGED_STATUSES | ERROR_STATUSES == finished
    assert not JUDGED_STATUSES & ERROR_STATUSES


def test_errored_sessions_are_left_out_of_success_and_counted_apart():
    def session(index, status, outcome, skill):
        return Session(task_index=index, skills=[skill], status=status, outcome=outcome)

    correct, incorrect = EvaluationOutcome.CORRECT, EvaluationOutcome.INCORRECT
    sessions = [
        session(0, SessionStatus.COMPLETED, correct, "a"),
        session(1, SessionStatus.AGENT_UNKNOWN_ERROR, incorrect, "a"),
        session(2, SessionStatus.TASK_UNKNOWN_ERROR, correct, "b"),  # a callback raised late
        session(3, SessionStatus.AGENT_VALIDATION_FAILED, incorrect, "b"),
        session(4, SessionStatus.COMPLETED, correct, "b"),
    ]
    metrics = compute_metrics(sessions)
    assert (metrics.sessions, metrics.judged, metrics.errored) == (5, 3, 2)
    assert metrics.correct == 2 and metrics.success_rate == pytest.approx(2 / 3)
    assert metrics.per_skill["a"].count == 1 and metrics.per_skill["a"].success_rate == 1.0
    assert metrics.per_skill["b"].count == 2 and metrics.per_skill["b"].correct == 1
    assert metrics.learning_curve.cumulative == [1.0, 0.5, pytest.approx(2 / 3)]
    assert metrics.status_counts["agent_unknown_error"] == 1  # status counts keep them all
    assert metrics.errored_counts == {"agent_unknown_error": 1, "task_unknown_error": 1}


def test_a_metrics_file_of_an_earlier_version_reads_with_its_errors_counted():
    old = json.loads(OLD_METRICS.read_text())
    assert "judged" not in old
    metrics = LifelongMetrics.model_validate(old)
    assert (metrics.judged, metrics.errored) == (6, 0)
    old["status_counts"] = {"completed": 4, "agent_unknown_error": 2}
    assert LifelongMetrics.model_validate(old).errored == 2


def test_a_callback_that_raises_at_completion_is_not_counted_correct(tmp_path):
    run = run_sums(tmp_path / "run", callbacks=[Raiser("on_environment_complete", 7)])
    errored = next(s for s in run.sessions if s.task_index == 7)
    assert errored.outcome == EvaluationOutcome.CORRECT  # the task was solved, then it raised
    assert errored.status == SessionStatus.TASK_UNKNOWN_ERROR and not errored.solved
    metrics = run.metrics
    assert (metrics.judged, metrics.errored, metrics.correct) == (11, 1, 10)
    saved = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert (saved["judged"], saved["errored"], saved["correct"]) == (11, 1, 10)
    assert saved["success_rate"] == pytest.approx(10 / 11)


def test_the_report_says_what_the_success_is_over_and_what_errored(tmp_path):
    run = run_sums(tmp_path / "run", PatternAgent(SumEnv().tasks, wrong={3}, fail={5, 9}))
    line = format_report(run.metrics).splitlines()[0]
    assert line == (
        "sessions 12   correct 9   success rate 90.0% over 10 judged tasks; 2 errored "
        "(agent_unknown_error 2): not counted, see docs/runner.md"
    )
    result = CliRunner().invoke(main, ["report", str(tmp_path / "run")])
    assert result.exit_code == 0 and line in result.output
    page = report_page(run)
    assert 'id="headline-judged">10<' in page
    assert "2 errored (agent_unknown_error 2): not counted" in page
    clean = run_sums(tmp_path / "clean")
    assert format_report(clean.metrics).splitlines()[0] == (
        "sessions 12   correct 11   success rate 91.7%"
    )


def test_compare_and_the_gain_leave_errored_tasks_out(tmp_path):
    broken = run_sums(tmp_path / "broken", callbacks=[Raiser("on_environment_complete", 7)])
    plain = run_sums(tmp_path / "plain")
    gain = paired_gain(broken, plain)
    assert gain.errored_pairs == 1 and gain.overall.tasks == 11
    assert gain.overall.gain == 0.0  # task 7, solved by both, is no loss of the broken run
    assert "1 tasks left out: either run errored on them" in format_gain(gain)
    assert solved_by_one(plain, broken) == ([], [])
    runs = load_compared_runs([tmp_path / "broken", tmp_path / "plain"])
    assert "12 sessions; 1 errored (task_unknown_error 1): not counted" in format_runs(runs)
    folders = [str(tmp_path / "broken"), str(tmp_path / "plain")]
    result = CliRunner().invoke(main, ["compare", *folders])
    assert result.exit_code == 0, result.output
    assert "overall" in result.output and "90.9%" in result.output  # 10 of 11 judged
    page = tmp_path / "compare.html"
    assert CliRunner().invoke(main, ["compare", *folders, "--html", str(page)]).exit_code == 0
    assert "A: 1 errored (task_unknown_error 1): not counted" in page.read_text()


def test_a_run_with_errored_sessions_exits_3_with_one_line(tmp_path):
    broken = tmp_path / "broken"
    broken.touch()
    out = tmp_path / "run"
    callback = f"{BROKEN_CALLBACK}:position=1,broken={broken}"
    args = ("--output", str(out), "--max-tasks", "4", "--callback", callback)
    result = invoke_run(*args)
    assert result.exit_code == 3, result.output
    assert result.output.strip().splitlines()[-1] == (
        f"Error: 1 session errored (task_unknown_error 1) in {out}: not counted in the "
        "success rate; fix the cause and run the same command with --retry-errors to play "
        "them again (docs/runner.md)"
    )
    assert invoke_run(*args).exit_code == 3  # resumed, the record still holds the error
    broken.unlink()  # the fix
    result = invoke_run(*args, "--retry-errors")
    assert result.exit_code == 0, result.output
    assert "retrying from session" in result.output
    assert json.loads((out / "metrics.json").read_text())["errored"] == 0


def test_a_grid_cell_with_errored_sessions_is_not_skipped_and_the_grid_exits_3(tmp_path):
    broken = tmp_path / "broken"
    broken.touch()
    methods = {
        "standard": [],
        "buggy": [f"{BROKEN_CALLBACK}:position=1,broken={broken}"],
    }
    grid = {"max-tasks": 3, "grid": {"envs": {"db": {"env": "LifelongDB-v0"}}, "methods": methods}}
    config = tmp_path / "grid.yaml"
    config.write_text(yaml.safe_dump({"output": str(tmp_path / "grid"), **grid}, sort_keys=False))
    result = invoke_run("--config", str(config))
    assert result.exit_code == 3, result.output
    assert "1 session errored (task_unknown_error 1) in " in result.output
    result = invoke_run("--config", str(config))
    assert "cell 1/2 db/standard: finished already, skipped" in result.output
    assert "cell 2/2 db/buggy: running into" in result.output and result.exit_code == 3
    broken.unlink()
    result = invoke_run("--config", str(config), "--retry-errors")
    assert result.exit_code == 0, result.output
    assert "cell 2/2 db/buggy: finished already" not in result.output
    assert (
        "cell 2/2 db/buggy: finished already, skipped" in invoke_run("--config", str(config)).output
    )


def test_a_callback_failing_in_a_session_prints_no_traceback_and_logs_it(tmp_path):
    broken = tmp_path / "broken"
    broken.touch()
    out = tmp_path / "run"
    callback = f"{BROKEN_CALLBACK}:position=1,broken={broken}"
    command = [sys.executable, "-m", "lifelong_gym", "run", "--no-progress", "--output", str(out)]
    command += ["--max-tasks", "3", "--callback", callback]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 3, result.stderr
    assert "Traceback" not in result.stderr
    log = (out / "run.log").read_text()
    assert "callback BrokenWhile: on_environment_complete raised" in log
    assert "RuntimeError: a bug in the user's callback" in log
