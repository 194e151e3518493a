"""Fixtures of the report tests: a real browser, and small real runs to report on.

No browser can be downloaded here, so playwright drives the system's chromium (found on
PATH, or at LIFELONG_GYM_CHROMIUM).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from lifelong_gym.results.report import report_run

from .scripted_run import scripted_run


def chromium_path() -> str | None:
    """The chromium executable to drive, or None."""
    given = os.environ.get("LIFELONG_GYM_CHROMIUM")
    if given:
        return given
    return next(
        (found for name in ("chromium", "chromium-browser") if (found := shutil.which(name))), None
    )


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    """A headless chromium, or a skip naming what is missing."""
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="playwright is not installed: pip install playwright"
    )
    executable = chromium_path()
    if executable is None:
        pytest.skip("no chromium on PATH: apt-get install chromium (or set LIFELONG_GYM_CHROMIUM)")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable)
        yield launched
        launched.close()


@pytest.fixture(scope="session")
def scripted_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A reported run of the scripted agent with experience replay (several statuses)."""
    folder = scripted_run(tmp_path_factory.mktemp("report") / "scripted-replay", replay=2)
    report_run(folder)
    return folder
