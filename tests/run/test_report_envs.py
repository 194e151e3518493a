"""report.html of the KG and OS environments in a real browser: their own details shown."""

from __future__ import annotations

import re

import pytest

from lifelong_gym.envs.kg.env import load_kg_tasks
from lifelong_gym.envs.os.tasks import load_os_tasks, solution_bash
from lifelong_gym.results.folder import SESSIONS_FILE, read_sessions
from lifelong_gym.results.html_report import REPORT_FILE
from lifelong_gym.results.report import report_run
from lifelong_gym.session import Role

from .browser import OpenPage, file_url
from .scripted_run import oracle_run

VARIABLE = re.compile(r"variable (#\d+), which holds")


def open_session(browser, folder, position: int) -> OpenPage:
    page = OpenPage(browser, file_url(folder / REPORT_FILE, f"#session-{position}"))
    page.page.wait_for_selector(f"#session-view[data-position='{position}']")
    return page


def test_kg_report_lists_variables_and_executed_actions(browser, tmp_path):
    folder = oracle_run(tmp_path / "kg-oracle", "LifelongKG-v0", sessions=2)
    report_run(folder)
    session = read_sessions(folder / SESSIONS_FILE)[0][0]
    observations = [m.content for m in session.chat_history[1:] if m.role == Role.USER]
    made = [m for m in map(VARIABLE.search, observations) if m]
    assert made, "the oracle's first KG task makes no variable"
    page = open_session(browser, folder, 1)
    cells = page.page.eval_on_selector_all(
        "#session-view .vars tr td:first-child", "cells => cells.map(c => c.textContent)"
    )
    assert cells == [m.group(1) for m in made]
    executed = page.page.locator("#session-view .tag.ok", has_text="executed").count()
    assert executed == sum(session.details["executed"]) > 0
    task = load_kg_tasks()[session.task_index]
    side = page.page.text_content("#session-view .side")
    assert task.s_expression in side and task.question in side
    assert "f1" in side and page.errors == []
    page.screenshot(tmp_path / "kg-session.png")


def test_os_report_shows_the_reference_script(browser, tmp_path):
    from lifelong_gym.docker_engine import docker_client
    from lifelong_gym.envs.os.image import DEFAULT_IMAGE
    from lifelong_gym.errors import SandboxError

    try:
        docker_client().images.get(DEFAULT_IMAGE)
    except (SandboxError, Exception) as error:  # noqa: BLE001 - any failure: no usable engine
        pytest.skip(f"no Docker engine with {DEFAULT_IMAGE}: {error}")
    folder = oracle_run(tmp_path / "os-oracle", "LifelongOS-v0", sessions=2, pool_size=1)
    report_run(folder)
    session = read_sessions(folder / SESSIONS_FILE)[0][0]
    page = open_session(browser, folder, 1)
    task = load_os_tasks()[session.task_index]
    side = page.page.text_content("#session-view .side")
    assert solution_bash(task.ground_truth) in side
    if task.evaluation is not None:
        assert task.evaluation.script in side
    reply = page.page.locator("#session-view .msg.agent pre.content").first.text_content()
    assert reply == session.chat_history[1].content and reply.startswith("Act: bash")
    tags = page.page.eval_on_selector_all(
        "#session-view .msg.agent .tag", "tags => tags.map(t => t.textContent)"
    )
    assert tags == [f"exit code {code}" for code in session.details["exit_codes"]] and tags
    assert page.errors == []
    page.screenshot(tmp_path / "os-session.png")
