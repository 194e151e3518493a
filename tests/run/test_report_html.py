"""report.html in a real browser: counts, filters, conversations, anchors, hostile text."""

from __future__ import annotations

import json

import pytest

from lifelong_gym.envs.db.tasks import load_db_tasks
from lifelong_gym.results.folder import METRICS_FILE, SESSIONS_FILE, read_sessions
from lifelong_gym.results.html_report import REPORT_FILE

from .browser import OpenPage, file_url
from .scripted_run import HOSTILE_REPLY

expect = pytest.importorskip("playwright.sync_api").expect

HOSTILE_POSITION = 4  # the scripted agent's 4th session replies with markup


def shown(page: OpenPage) -> int:
    return int(page.page.get_attribute("#shown-count", "data-shown"))


def visible_positions(page: OpenPage) -> list[int]:
    return [
        int(p)
        for p in page.page.eval_on_selector_all(
            "#session-rows .row", "rows => rows.map(r => r.dataset.position)"
        )
    ]


def test_the_page_shows_the_metrics_and_fetches_nothing(browser, scripted_report, tmp_path):
    metrics = json.loads((scripted_report / METRICS_FILE).read_text())
    page = OpenPage(browser, file_url(scripted_report / REPORT_FILE))
    text = page.page.text_content
    assert text("#headline-sessions") == str(metrics["sessions"])
    assert text("#headline-correct") == str(metrics["correct"])
    assert text("#headline-success") == f"{metrics['success_rate']:.1%}"
    chips = page.page.eval_on_selector_all(
        ".chip[data-status]",
        "chips => chips.map(c => [c.dataset.status, c.querySelector('.chip-count').textContent])",
    )
    assert {status: int(n) for status, n in chips} == metrics["status_counts"]
    assert len(metrics["status_counts"]) >= 3
    assert shown(page) == metrics["sessions"] == len(visible_positions(page))
    identity = page.page.text_content(".identity")
    assert "LifelongDB-v0" in identity and "ScriptedAgent" in identity
    assert "ExperienceReplayCallback" in identity
    assert page.page.locator("svg.chart").count() == 3 + 2  # and the replay memory's two
    assert page.outside_requests() == [] and page.errors == []
    page.screenshot(tmp_path / "report.png")


def test_filter_to_one_status_and_read_a_reply_as_text(browser, scripted_report, tmp_path):
    metrics = json.loads((scripted_report / METRICS_FILE).read_text())
    sessions = read_sessions(scripted_report / SESSIONS_FILE)[0]
    page = OpenPage(browser, file_url(scripted_report / REPORT_FILE))
    failed = "agent_validation_failed"
    page.page.select_option(
        "#filter-status", label=f"{failed} ({metrics['status_counts'][failed]})"
    )
    expected = [i for i, s in enumerate(sessions, start=1) if s.status.value == failed]
    assert shown(page) == metrics["status_counts"][failed] == len(expected)
    assert visible_positions(page) == expected
    page.page.click(f"#session-rows .row[data-position='{HOSTILE_POSITION}']")
    page.page.wait_for_selector(f"#session-view[data-position='{HOSTILE_POSITION}']")
    reply = page.page.locator("#session-view .msg.agent pre.content").first
    assert reply.text_content() == HOSTILE_REPLY
    # shown as text: nothing of it ran or became an element
    assert page.page.evaluate("window.__pwned") is None
    assert page.page.locator("#session-view img, #session-view script").count() == 0
    task = load_db_tasks()[sessions[HOSTILE_POSITION - 1].task_index]
    reference = page.page.text_content("#session-view .side")
    assert task.reference_sql[0] in reference and task.instruction in reference
    assert "Experience replay" in reference
    page.screenshot(tmp_path / "filtered-session.png")
    assert page.outside_requests() == [] and page.errors == []


def test_outcome_skill_and_text_filters_agree_with_the_sessions(browser, scripted_report):
    sessions = read_sessions(scripted_report / SESSIONS_FILE)[0]
    metrics = json.loads((scripted_report / METRICS_FILE).read_text())
    page = OpenPage(browser, file_url(scripted_report / REPORT_FILE))
    correct = metrics["outcome_counts"]["correct"]
    page.page.select_option("#filter-outcome", label=f"correct ({correct})")
    assert shown(page) == correct
    page.page.select_option("#filter-outcome", value="")
    skill, figures = next(iter(metrics["per_skill"].items()))
    page.page.select_option("#filter-skill", label=f"{skill} ({figures['count']})")
    assert shown(page) == figures["count"]
    page.page.click("text=clear filters")
    query = "select 1;"
    expected = [
        i
        for i, s in enumerate(sessions, start=1)
        if any(query in m.content.lower() for m in s.chat_history)
    ]
    page.page.fill("#filter-text", query.upper())
    expect(page.page.locator("#shown-count")).to_have_attribute("data-shown", str(len(expected)))
    assert visible_positions(page) == expected and expected


def test_an_anchor_opens_the_session_of_a_task(browser, scripted_report):
    sessions = read_sessions(scripted_report / SESSIONS_FILE)[0]
    position = 8
    task_index = sessions[position - 1].task_index
    page = OpenPage(browser, file_url(scripted_report / REPORT_FILE, f"#task-{task_index}"))
    page.page.wait_for_selector(f"#session-view[data-position='{position}']")
    heading = page.page.text_content("#session-view h2")
    assert heading == f"Session {position} · task {task_index}"
    assert "task_limit_reached" in page.page.text_content("#session-view .session-head")
    replies = page.page.locator("#session-view .msg.agent").count()
    assert replies == sessions[position - 1].agent_turns


def test_previous_and_next_walk_the_sessions_the_filters_show(browser, scripted_report):
    metrics = json.loads((scripted_report / METRICS_FILE).read_text())
    sessions = read_sessions(scripted_report / SESSIONS_FILE)[0]
    failed = "agent_validation_failed"
    expected = [i for i, s in enumerate(sessions, start=1) if s.status.value == failed]
    page = OpenPage(browser, file_url(scripted_report / REPORT_FILE))
    page.page.select_option(
        "#filter-status", label=f"{failed} ({metrics['status_counts'][failed]})"
    )
    page.page.click(f"#session-rows .row[data-position='{expected[0]}']")
    page.page.wait_for_selector(f"#session-view[data-position='{expected[0]}']")
    assert page.page.locator("a#session-previous").count() == 0  # the first one shown
    for position in expected[1:]:
        page.page.click("#session-next")
        page.page.wait_for_selector(f"#session-view[data-position='{position}']")
    assert page.page.locator("a#session-next").count() == 0  # the last one shown
    page.page.click("#session-previous")
    page.page.wait_for_selector(f"#session-view[data-position='{expected[-2]}']")
    assert page.page.get_attribute("#session-up", "href") == "#sessions"
    assert len(expected) >= 2 and page.errors == []
