"""Fixtures for the agent tests: chat-completions servers on loopback (scripted and real)."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest

from .chat_server import ChatServer
from .llama_server import LlamaServer


@pytest.fixture
def chat_server() -> Iterator[ChatServer]:
    """A chat-completions server on loopback, stopped after the test."""
    pytest.importorskip("openai")
    server = ChatServer()
    yield server
    server.close()


@pytest.fixture(scope="session")
def llama_server(smollm2_path: Path) -> Iterator[LlamaServer]:
    """llama-cpp-python's OpenAI-compatible server serving SmolLM2, for the whole session."""
    pytest.importorskip("openai")
    for module in ("llama_cpp", "uvicorn", "sse_starlette", "starlette_context"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is missing: pip install 'llama-cpp-python[server]'")
    server = LlamaServer(smollm2_path)
    yield server
    server.close()
