"""Keeping long text (command output, query results) within a limit, visibly."""

from __future__ import annotations


def truncate_middle(text: str, limit: int) -> str:
    """Keep the head and tail of `text` within `limit` characters, saying how much was cut."""
    if len(text) <= limit:
        return text
    note = "\n[... {} characters truncated ...]\n"
    room = max(limit - len(note.format(len(text))), 0)
    head = room - room // 3
    tail = room - head
    cut = len(text) - head - tail
    end = text[len(text) - tail :] if tail else ""
    return text[:head] + note.format(cut) + end
