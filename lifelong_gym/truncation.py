"""Keeping long text (command output, query results) within a limit, visibly."""

from __future__ import annotations

_NOTE = "\n[... {} characters truncated ...]\n"


def truncate_middle(text: str, limit: int) -> str:
    """Keep the head and tail of `text` within `limit` characters, saying how much was cut."""
    if len(text) <= limit:
        return text
    return _join(text, text, len(text), limit)


def truncate_stream(head: str, tail: str, limit: int, *, dropped: int) -> str:
    """Join the kept head and tail of a long stream within `limit` characters.

    `dropped` counts the characters already discarded between `head` and `tail`; the note
    states everything cut, so the reader knows how much output there was.
    """
    if len(head) + len(tail) <= limit and not dropped:
        return head + tail
    return _join(head, tail, len(head) + len(tail) + dropped, limit)


def _join(head: str, tail: str, total: int, limit: int) -> str:
    """The start of `head` and the end of `tail`, with a note on the `total` less what is kept."""
    room = max(limit - len(_NOTE.format(total)), 0)
    keep_head = min(room - room // 3, len(head))
    keep_tail = min(room - keep_head, len(tail))
    end = tail[len(tail) - keep_tail :] if keep_tail else ""
    return head[:keep_head] + _NOTE.format(total - keep_head - keep_tail) + end
