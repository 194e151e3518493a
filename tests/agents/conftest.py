"""Fixtures for the agent tests: a tiny local model and a chat-completions server on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .chat_server import ChatServer


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A random-weight Llama model with a tokenizer trained here, saved like a real model."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from lifelong_gym.agents.models.tiny import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny-model"))


@pytest.fixture
def chat_server() -> Iterator[ChatServer]:
    """A chat-completions server on loopback, stopped after the test."""
    pytest.importorskip("openai")
    server = ChatServer()
    yield server
    server.close()
