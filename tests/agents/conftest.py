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


def _llama_server_installed() -> None:
    pytest.importorskip("openai")
    for module in ("llama_cpp", "uvicorn", "sse_starlette", "starlette_context"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is missing: pip install 'llama-cpp-python[server]'")


@pytest.fixture(scope="session")
def llama_server(smollm2_path: Path) -> Iterator[LlamaServer]:
    """llama-cpp-python's OpenAI-compatible server serving SmolLM2, for the whole session."""
    _llama_server_installed()
    server = LlamaServer(smollm2_path)
    yield server
    server.close()


@pytest.fixture(scope="module")
def llama_tools_server(smollm2_path: Path) -> Iterator[LlamaServer]:
    """The same server with the chat format that renders `tools` and parses calls.

    With SmolLM2's own chat format the server ignores `tools` (no schema in the prompt,
    no `tool_calls` back); `chatml-function-calling` handles them (`tool_choice="auto"`;
    "required" fails inside llama-cpp-python 0.3.36).
    """
    _llama_server_installed()
    server = LlamaServer(smollm2_path, chat_format="chatml-function-calling")
    yield server
    server.close()
