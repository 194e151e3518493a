"""Fixtures for the agent tests: a tiny local model and a chat-completions server on loopback."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .chat_server import ChatServer


@pytest.fixture
def chat_server() -> Iterator[ChatServer]:
    """A chat-completions server on loopback, stopped after the test."""
    pytest.importorskip("openai")
    server = ChatServer()
    yield server
    server.close()
