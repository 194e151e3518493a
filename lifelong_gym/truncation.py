"""Keeping long text (command output, query results) within a limit, visibly."""

from __future__ import annotations

_NOTE = "\n[... {} characters truncated ...]\n"


def truncate_middle(text: str, limit: int) -> str:
    """Keep the head and tail of `text` within `limit` characters, saying how much was cut."""
    if len(text) <= limit:
        return text
    return truncate_stream(text, "", limit, dropped=0)


def truncate_stream(head: str, tail: str, limit: int, *, dropped: int) -> str:
    """Join the kept head and tail of a long stream within `limit` characters.

    `dropped` counts the characters already discarded between `head` and `tail`; the note
    states everything cut, so the reader knows how much output there was.
    """
    text = head + tail
    if len(text) <= limit and not dropped:
        return text
    room = max(limit - len(_NOTE.format(len(text) + dropped)), 0)
    if not tail:  # one piece of text: take the tail from its end
        head, tail = text[: len(text) - len(text) // 2], text[len(text) - len(text) // 2 :]
    keep_head = min(room - room // 3, len(head))
    keep_tail = min(room - keep_head, len(tail))
    cut = len(head) - keep_head + len(tail) - keep_tail + dropped
    end = tail[len(tail) - keep_tail :] if keep_tail else ""
    return head[:keep_head] + _NOTE.format(cut) + end
