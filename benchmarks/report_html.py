"""How a 10,000-session report.html behaves in a real browser, against a naive page.

Runs `--sessions` tasks (default 10,000: the shipped DB set repeated under new indices) of
the SQLite DB environment with an agent that solves some tasks, answers others wrongly and
breaks the format on the rest, writes the run's report.html, and writes a naive page of the
same run (every row and every conversation as markup, filtered by hiding rows). Both are
opened in chromium (playwright); printed side by side: file size, time to open, time to
filter to one status, to search the conversations (ours), and the longest main-thread
task (how long the page froze at once); each page `--rounds` times, interleaved, min and
median, with the load average.

    python benchmarks/report_html.py [--sessions N] [--rounds N] [--chromium PATH] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
from html import escape
from pathlib import Path

import gymnasium as gym

import lifelong_gym  # noqa: F401 - registers the ids
from lifelong_gym.agents import Agent, OracleAgent
from lifelong_gym.envs.db.tasks import load_db_tasks, to_record
from lifelong_gym.results.folder import SESSIONS_FILE, read_sessions
from lifelong_gym.results.report import report_run
from lifelong_gym.run import Runner
from lifelong_gym.session import Session

LONG_TASKS = """() => new Promise(done => {
  new PerformanceObserver(list => done(Math.max(0, ...list.getEntries().map(e => e.duration))))
    .observe({type: "longtask", buffered: true});
  setTimeout(() => done(0), 1000);
})"""


class MixedAgent(Agent):
    """Solves two tasks in four, answers one wrongly, and breaks the format on the fourth."""

    def __init__(self, tasks):
        self.oracle = OracleAgent(tasks)

    def act(self, session: Session) -> str:
        """The oracle's reply, a wrong answer, or no action, by task index."""
        kind = session.task_index % 4
        if kind == 2:
            return 'Action: Answer\nFinal Answer: [("wrong",)]'
        if kind == 3:
            return "I am not sure what to do <here>."
        return self.oracle.act(session)


def make_run(folder: Path, sessions: int) -> Path:
    """A finished run of `sessions` tasks in `folder`, reported."""
    shipped = load_db_tasks()
    base = [to_record(shipped[i]) for i in shipped.order]
    task_file = folder / "tasks.jsonl"
    with task_file.open("w") as out:
        for i in range(sessions):
            out.write(json.dumps({**base[i % len(base)], "sample_index": i}) + "\n")
    env = gym.make("LifelongDB-v0", tasks=str(task_file))
    agent = MixedAgent(env.unwrapped.tasks)
    started = time.perf_counter()
    Runner(env, agent, [], output=folder / "run", progress=False, plots=False).run()
    env.close()
    print(f"ran {sessions} sessions in {time.perf_counter() - started:.1f} s")
    started = time.perf_counter()
    report_run(folder / "run")
    print(f"report (metrics, 3 PNGs, report.html) in {time.perf_counter() - started:.1f} s")
    return folder / "run"


def naive_page(run: Path, path: Path) -> Path:
    """Every session as a table row and its conversation as markup, filtered by hiding rows."""
    rows = []
    for i, session in enumerate(read_sessions(run / SESSIONS_FILE)[0], start=1):
        talk = "".join(f"<pre>{escape(m.content)}</pre>" for m in session.chat_history)
        rows.append(
            f"<tr data-status='{session.status.value}'><td>{i}</td><td>{session.task_index}</td>"
            f"<td>{session.status.value}</td><td>{session.outcome.value}</td>"
            f"<td><details><summary>conversation</summary>{talk}</details></td></tr>"
        )
    script = """<script>
document.getElementById('status').addEventListener('change', e => {
  let n = 0;
  for (const row of document.querySelectorAll('tr[data-status]')) {
    const show = !e.target.value || row.dataset.status === e.target.value;
    row.style.display = show ? '' : 'none'; n += show;
  }
  document.getElementById('shown-count').dataset.shown = n;
});
</script>"""
    path.write_text(
        "<!doctype html><meta charset=utf-8><select id=status><option value=''>all</option>"
        "<option>agent_validation_failed</option></select><span id=shown-count data-shown=all>"
        f"</span><table>{''.join(rows)}</table>{script}",
        encoding="utf-8",
    )
    return path


def measure(browser, path: Path, status_choice: tuple[str, str], expected: int) -> dict:
    """Seconds to open the page, to filter it to one status and (ours) to search its text."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    started = time.perf_counter()
    page.goto(path.resolve().as_uri(), timeout=300_000)
    page.wait_for_selector("#shown-count[data-shown]", state="attached", timeout=300_000)
    result = {"open": time.perf_counter() - started}
    started = time.perf_counter()
    page.select_option(status_choice[0], label=status_choice[1], timeout=60_000)
    page.wait_for_selector(
        f"#shown-count[data-shown='{expected}']", state="attached", timeout=300_000
    )
    result["filter"] = time.perf_counter() - started
    if page.locator("#filter-text").count():
        page.click("text=clear filters")
        started = time.perf_counter()
        page.fill("#filter-text", "not sure")
        page.wait_for_selector(
            f"#shown-count[data-shown='{expected}']", state="attached", timeout=300_000
        )
        result["search"] = time.perf_counter() - started
    result["longest task"] = page.evaluate(LONG_TASKS) / 1000
    page.close()
    return result


def main() -> None:
    """Build the run, both pages, and print the measurements side by side."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--chromium", default=shutil.which("chromium"))
    parser.add_argument("--keep", type=Path, help="keep the run and pages in this folder")
    parser.add_argument("--rounds", type=int, default=3, help="times each page is measured")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    folder = args.keep or Path(tempfile.mkdtemp(prefix="report-html-"))
    folder.mkdir(parents=True, exist_ok=True)
    run = make_run(folder, args.sessions)
    sessions = read_sessions(run / SESSIONS_FILE)[0]
    failed = sum(s.status.value == "agent_validation_failed" for s in sessions)
    ours, naive = run / "report.html", naive_page(run, folder / "naive.html")
    choices = {
        "naive": (naive, ("#status", "agent_validation_failed")),
        "ours": (ours, ("#filter-status", f"agent_validation_failed ({failed})")),
    }
    rounds: dict[str, list[dict]] = {name: [] for name in choices}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=args.chromium)
        for _ in range(args.rounds):  # interleaved: naive, ours, naive, ours, ...
            for name, (path, choice) in choices.items():
                rounds[name].append(measure(browser, path, choice, failed))
        browser.close()
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"{args.sessions} sessions, {failed} agent_validation_failed, headless chromium,")
    print(f"{args.rounds} rounds, min / median in seconds (load average {load})")
    columns = ("open", "filter", "search", "longest task")
    print(f"  {'':<6} {'file':>8}" + "".join(f" {c:>13}" for c in columns))
    for name, (page, _) in choices.items():
        cells = []
        for column in columns:
            values = [r[column] for r in rounds[name] if column in r]
            cells.append(f"{min(values):.2f} / {statistics.median(values):.2f}" if values else "-")
        size = f"{page.stat().st_size / 1e6:.1f}MB"
        print(f"  {name:<6} {size:>8}" + "".join(f" {c:>13}" for c in cells))
    for column in ("open", "filter"):
        ratio = statistics.median(r[column] for r in rounds["naive"]) / statistics.median(
            r[column] for r in rounds["ours"]
        )
        print(f"  naive / ours, median {column}: {ratio:.1f}x")
    if args.keep is None:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
