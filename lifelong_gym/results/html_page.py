"""One self-contained HTML page: inline style and script, JSON data blocks, no network.

Data travels in `<script type="application/json">` blocks whose `<`, `>` and `&` are
written as JSON escapes, so no text from an agent or a task can close the block or open
markup; the page's script reads them with `JSON.parse` and shows text with `textContent`.
A Content-Security-Policy forbids every fetch and lets only the page's own script run.
"""

from __future__ import annotations

import json
import re
import secrets
from html import escape
from pathlib import Path
from typing import Any

from lifelong_gym.results.folder import write_text_atomic

ASSETS = Path(__file__).parent / "assets"
# what may not appear raw in a script element, and its JSON escape
_UNSAFE_IN_SCRIPT = (
    ("<", "\\u003c"),
    (">", "\\u003e"),
    ("&", "\\u0026"),
    ("\u2028", "\\u2028"),
    ("\u2029", "\\u2029"),
)
_SLOT = re.compile(r"@(TITLE|NONCE|STYLE|BODY|DATA|SCRIPT)@")


def script_json(data: Any) -> str:
    """`data` as JSON that is safe inside a `<script type="application/json">` element."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    for unsafe, escaped in _UNSAFE_IN_SCRIPT:  # str.replace: far faster than str.translate
        text = text.replace(unsafe, escaped)
    return text


def json_block(element_id: str, data: Any) -> str:
    """A JSON data block the page's script reads by id."""
    return f'<script type="application/json" id="{escape(element_id)}">{script_json(data)}</script>'


def render_page(title: str, body: str, data_blocks: list[str], script: str) -> str:
    """The whole page: `body` is trusted markup (escaped by its makers), `script` an asset name."""
    slots = {
        "TITLE": escape(title),
        "NONCE": secrets.token_urlsafe(16),
        "STYLE": (ASSETS / "report.css").read_text(encoding="utf-8"),
        "BODY": body,
        "DATA": "\n".join(data_blocks),
        "SCRIPT": (ASSETS / script).read_text(encoding="utf-8"),
    }
    template = (ASSETS / "page.html").read_text(encoding="utf-8")
    return _SLOT.sub(lambda match: slots[match.group(1)], template)


def write_page(path: Path, page: str) -> Path:
    """Write a page next to where it goes, then move it into place."""
    write_text_atomic(path, page)
    return path
