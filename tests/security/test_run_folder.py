"""A run folder edited or damaged by hand: resume refuses it clearly, never miscounts."""

from __future__ import annotations

import json

import pytest

from lifelong_gym.errors import RunDirectoryError
from lifelong_gym.run import Callback, Runner
from tests.arithmetic_env import PatternAgent, SumEnv


class Tally(Callback):
    """A stateful callback, so that the run keeps a state.json."""

    state_attributes = ("seen",)

    def __init__(self):
        self.seen = 0

    def on_environment_complete(
        self, run, state, control, *, agent, env, session, history, **kwargs
    ):
        self.seen += 1


def run(folder, max_tasks=None, callbacks=()):
    env = SumEnv()
    agent = PatternAgent(env.tasks, wrong={3})
    runner = Runner(
        env, agent, list(callbacks), output=folder, max_tasks=max_tasks, progress=False, plots=False
    )
    return runner.run()


@pytest.fixture
def folder(tmp_path):
    path = tmp_path / "run"
    run(path, max_tasks=5, callbacks=[Tally()])
    return path


def lines(folder) -> list[bytes]:
    return (folder / "sessions.jsonl").read_bytes().splitlines(keepends=True)


def test_a_duplicated_line_is_refused_not_miscounted(folder):
    records = lines(folder)
    (folder / "sessions.jsonl").write_bytes(b"".join([*records[:3], records[2], *records[3:]]))
    with pytest.raises(RunDirectoryError, match=r"sessions.jsonl: session 4 is task \d+, but"):
        run(folder, callbacks=[Tally()])


def test_a_removed_line_is_refused(tmp_path):
    folder = tmp_path / "run"
    run(folder, max_tasks=5)  # no callback state: only the stream order can tell
    records = lines(folder)
    (folder / "sessions.jsonl").write_bytes(b"".join([records[0], *records[2:]]))
    with pytest.raises(RunDirectoryError, match="session 2 is task"):
        run(folder)


@pytest.mark.parametrize("status", ["running", "initial"])
def test_a_line_edited_to_an_unfinished_status_is_refused(folder, status):
    records = lines(folder)
    edited = json.loads(records[1])
    edited["status"] = status
    records[1] = (json.dumps(edited) + "\n").encode()
    (folder / "sessions.jsonl").write_bytes(b"".join(records))
    with pytest.raises(
        RunDirectoryError, match=f"sessions.jsonl:2 records a session that is {status}"
    ):
        run(folder, callbacks=[Tally()])


def test_a_line_with_an_unknown_status_is_refused(folder):
    records = lines(folder)
    records[0] = records[0].replace(b'"status":"completed"', b'"status":"solved"')
    (folder / "sessions.jsonl").write_bytes(b"".join(records))
    with pytest.raises(RunDirectoryError, match="sessions.jsonl:1 is not a session record"):
        run(folder, callbacks=[Tally()])


def test_more_sessions_than_the_stream_is_refused(tmp_path):
    folder = tmp_path / "run"
    run(folder, max_tasks=5)
    (folder / "sessions.jsonl").write_bytes(b"".join(lines(folder) * 4))  # 20 > 12 tasks
    with pytest.raises(RunDirectoryError, match="records 20 sessions but the run's task stream"):
        run(folder)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("config.json", "{not json", "config.json is not JSON"),
        ("config.json", "[1, 2]", "config.json holds a list, not an object"),
        ("state.json", "\x00\x01", "state.json is not JSON"),
        ("state.json", '{"sessions": "five", "callbacks": {}}', "state.json is not a callback"),
        ("state.json", '{"sessions": 5, "callbacks": []}', "state.json is not a callback"),
        ("state.json", '"text"', "state.json holds a str"),
    ],
)
def test_a_damaged_json_file_names_the_file(folder, name, content, message):
    (folder / name).write_text(content)
    with pytest.raises(RunDirectoryError, match=message) as raised:
        run(folder, callbacks=[Tally()])
    assert "--overwrite" in str(raised.value)


def test_the_cli_prints_the_damage_as_one_line(folder):
    from click.testing import CliRunner

    from lifelong_gym.cli import main

    (folder / "config.json").write_text("{not json")
    result = CliRunner().invoke(main, ["run", "--output", str(folder), "--no-progress"])
    assert result.exit_code != 0
    assert "Error:" in result.output and "config.json is not JSON" in result.output
    assert "Traceback" not in result.output


def test_an_intact_folder_still_resumes(folder):
    metrics = run(folder, callbacks=[Tally()])
    assert metrics.sessions == 12 and metrics.correct == 11
