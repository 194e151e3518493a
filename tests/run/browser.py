"""Pages opened in the real browser of the `browser` fixture (tests/run/conftest.py).

Every request a page makes is recorded, so a test can check that the report fetched
nothing from outside its own file.
"""

from __future__ import annotations

from pathlib import Path


class OpenPage:
    """A page of the browser, with the requests it made and the script errors it raised."""

    def __init__(self, browser: object, url: str):
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.page = browser.new_page(viewport={"width": 1400, "height": 1000})  # type: ignore[attr-defined]
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.goto(url)
        self.page.wait_for_selector("#shown-count[data-shown], .runs-table")

    def outside_requests(self) -> list[str]:
        """Requests for anything but local files and inline data."""
        return [url for url in self.requests if not url.startswith(("file://", "data:"))]

    def screenshot(self, path: Path) -> Path:
        """A full-page screenshot."""
        self.page.screenshot(path=str(path), full_page=True)
        return path


def file_url(path: Path, anchor: str = "") -> str:
    """The file:// URL of a page, with an optional #anchor."""
    return path.resolve().as_uri() + anchor
