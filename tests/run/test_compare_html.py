"""`compare --html` in a real browser: tasks one run solved and the other did not, linked."""

from __future__ import annotations

from click.testing import CliRunner

from lifelong_gym.cli import main
from lifelong_gym.results.folder import SESSIONS_FILE, read_sessions
from lifelong_gym.session import EvaluationOutcome

from .browser import OpenPage, file_url
from .test_compare import replay_runs


def solved(folder) -> dict[int, bool]:
    sessions = read_sessions(folder / SESSIONS_FILE)[0]
    return {s.task_index: s.outcome == EvaluationOutcome.CORRECT for s in sessions}


def test_compare_page_lists_the_differences_and_links_both_conversations(browser, tmp_path):
    plain, replay = replay_runs(tmp_path)
    page_path = tmp_path / "pages" / "comparison.html"
    page_path.parent.mkdir()
    result = CliRunner().invoke(
        main, ["compare", str(plain), str(replay), "--html", str(page_path)]
    )
    assert result.exit_code == 0, result.output
    assert f"wrote {page_path}" in result.output and (plain / "report.html").is_file()
    a, b = solved(plain), solved(replay)
    only_b = sorted(i for i in a if b[i] and not a[i])
    only_a = sorted(i for i in a if a[i] and not b[i])
    assert only_b, "replay should solve tasks the plain run did not"

    page = OpenPage(browser, file_url(page_path))
    counts = page.page.eval_on_selector_all(
        ".diff", "lists => lists.map(l => [l.dataset.solver, Number(l.dataset.tasks)])"
    )
    assert counts == [["A", len(only_a)], ["B", len(only_b)]]
    listed = page.page.eval_on_selector_all(
        ".diff[data-solver='B'] li", "items => items.map(i => Number(i.dataset.task))"
    )
    assert sorted(set(listed)) == only_b
    assert "plain" in page.page.text_content(".runs-table")
    page.page.click(".diff[data-solver='B'] button")  # open all groups
    page.screenshot(tmp_path / "compare.png")
    assert page.outside_requests() == [] and page.errors == []

    task = only_b[0]
    for letter, folder in (("A", plain), ("B", replay)):
        link = page.page.locator(
            f".diff[data-solver='B'] li[data-task='{task}'] a[data-run='{letter}']"
        )
        href = link.first.get_attribute("href")
        assert href.endswith(f"report.html#task-{task}")
        run_page = OpenPage(browser, file_url(page_path.parent) + "/" + href)
        position = run_page.page.get_attribute("#session-view", "data-position")
        sessions = read_sessions(folder / SESSIONS_FILE)[0]
        assert sessions[int(position) - 1].task_index == task
        outcome = run_page.page.text_content("#session-view .session-head .badge")
        assert outcome == ("correct" if letter == "B" else "incorrect")
