"""report.html shows what a memory method inserted, how it grew, which retrieved items were
followed by a success, and the gain over the stateless twin; a run without them shows none."""

from __future__ import annotations

import json
import re

import gymnasium as gym
import pytest
from click.testing import CliRunner

import lifelong_gym  # noqa: F401 - registers the ids
from lifelong_gym.agents import OracleAgent
from lifelong_gym.cli import main
from lifelong_gym.methods.method import Method
from lifelong_gym.results.folder import SESSIONS_FILE, read_sessions
from lifelong_gym.results.gain import twin_gain
from lifelong_gym.results.html_memory import memory_panel
from lifelong_gym.results.html_report import REPORT_FILE
from lifelong_gym.results.report import report_run
from lifelong_gym.results.run_record import load_run
from lifelong_gym.run import Runner
from lifelong_gym.session import EvaluationOutcome, Session, SessionStatus

from .browser import OpenPage, file_url

TASKS = 6
MEMORY_PARTS = ("id='memory-growth'", "id='retrieved-items'", 'id="headline-gain"')


def run_cli(*args: str) -> None:
    result = CliRunner().invoke(main, ["run", "--no-progress", "--max-tasks", str(TASKS), *args])
    assert result.exit_code == 0, result.output


def json_block(page: str, element_id: str) -> object:
    found = re.search(rf'<script type="application/json" id="{element_id}">(.*?)</script>', page)
    assert found, element_id
    return json.loads(found.group(1))


@pytest.fixture(scope="module")
def replay_run(tmp_path_factory):
    """The oracle on a few DB tasks with experience replay and its stateless twin."""
    folder = tmp_path_factory.mktemp("memory") / "replay"
    run_cli("--output", str(folder), "--callback", "experience_replay:n=2", "--stateless-baseline")
    report_run(folder)
    return folder


def test_a_replay_run_shows_its_memory_its_retrievals_and_its_gain(replay_run):
    page = (replay_run / REPORT_FILE).read_text()
    sessions = read_sessions(replay_run / SESSIONS_FILE)[0]
    inserted = [sum(m["chars"] for m in s.details.get("memory", [])) for s in sessions]
    assert inserted[0] == 0 and all(inserted[1:])  # the first task has nothing to replay
    rows = json_block(page, "report-data")["rows"]
    assert [row[8] for row in rows] == inserted

    growth = page[page.index("id='memory-growth'") :]
    assert "<svg" in growth[: growth.index("</section>")]
    assert "characters inserted" in growth

    table = page[page.index("id='retrieved-items'") :]
    table = table[: table.index("</table>")]
    replayed = [task for s in sessions for task in s.details["replayed"]]
    first = max(dict.fromkeys(replayed), key=replayed.count)  # ties: the first retrieved
    assert f"<td>task {first}</td><td class='num'>{replayed.count(first)}</td>" in table
    assert "100.0%" in table  # the oracle solves every task it was retrieved for

    gain = twin_gain(load_run(replay_run)).overall
    headline = page[page.index('id="headline-gain"') :]
    assert headline.startswith(f'id="headline-gain">{gain.gain * 100:+.1f}')
    assert f"[{gain.low * 100:+.1f}, {gain.high * 100:+.1f}]" in headline[:200]
    chart = page[page.index("Learning curve") :]
    assert "stateless cumulative" in chart[: chart.index("</svg>")]


def test_a_run_without_memory_or_twin_shows_none_of_it(tmp_path):
    run_cli("--output", str(tmp_path))
    report_run(tmp_path)
    page = (tmp_path / REPORT_FILE).read_text()
    assert not any(part in page for part in MEMORY_PARTS)
    assert "stateless cumulative" not in page
    data = json_block(page, "report-data")
    assert data["memory"] is False and all(len(row) == 8 for row in data["rows"])


def test_reasoning_memory_items_count_their_retrievals_and_the_successes_after_them():
    def session(index, retrieved, outcome, status=SessionStatus.COMPLETED):
        details = {"reasoning_memory": {"retrieved": retrieved}}
        return Session(task_index=index, status=status, outcome=outcome, details=details)

    correct, incorrect = EvaluationOutcome.CORRECT, EvaluationOutcome.INCORRECT
    sessions = [
        session(0, [], correct),
        session(1, [0], incorrect),
        session(2, [0, 1], correct),
        session(3, [1, 0], correct, SessionStatus.TASK_ENVIRONMENT_ERROR),  # no verdict
    ]
    panel = memory_panel(sessions)
    assert "<td>item 0</td><td class='num'>3</td><td class='num'>50.0%</td>" in panel
    assert "<td>item 1</td><td class='num'>2</td><td class='num'>100.0%</td>" in panel
    assert "Items retrieved per task" in panel


class HostileMemory(Method):
    """Inserts markup into every prompt."""

    def start(self, session):
        session.insert_memory("<script>window.pwned = 1</script><b>bold</b>", title="<i>notes</i>")


def test_hostile_memory_text_is_shown_as_text(browser, tmp_path):
    env = gym.make("LifelongDB-v0")
    agent = OracleAgent(env.unwrapped.tasks)
    callbacks = [HostileMemory().as_callback()]
    Runner(env, agent, callbacks, output=tmp_path, progress=False, plots=False, max_tasks=2).run()
    env.close()
    report_run(tmp_path)
    page_text = (tmp_path / REPORT_FILE).read_text()
    assert "<script>window.pwned" not in page_text and "<i>notes" not in page_text
    page = OpenPage(browser, file_url(tmp_path / REPORT_FILE, "#session-1"))
    inserted = page.page.locator("#memory-inserted")
    assert "<i>notes</i> · 44 characters" in inserted.text_content()
    assert "<script>window.pwned = 1</script><b>bold</b>" in inserted.text_content()
    assert page.page.evaluate("window.pwned") is None
    assert page.errors == []
