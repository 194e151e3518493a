"""OpenAIChatModel through the real `openai` client against a loopback chat server."""

from __future__ import annotations

import json
import logging
import re
import threading
import time

import pytest

from lifelong_gym.agents import (
    AgentContextLimitError,
    AgentError,
    ModelConfigError,
    OpenAIModelConfig,
)
from lifelong_gym.agents.models.openai_chat import OpenAIChatModel
from lifelong_gym.session import SessionStatus

from .chat_server import ChatServer, Reply

openai = pytest.importorskip("openai")

HISTORY = [{"role": "user", "content": "Count the rows."}]


def make_model(server: ChatServer, **options) -> OpenAIChatModel:
    options = {"max_retries": 2, "timeout": 5.0, **options}
    options = {"base_url": server.base_url, "model": "served", **options}
    config = OpenAIModelConfig(name="remote", max_new_tokens=64, **options)
    return OpenAIChatModel(config)


def test_a_reply_and_what_was_sent(chat_server: ChatServer, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("LIFELONG_TEST_KEY", "sk-secret")
    chat_server.push(Reply(content="Action: Answer\nFinal Answer: 3"))
    model = make_model(chat_server, api_key_env="LIFELONG_TEST_KEY")
    assert model.generate([HISTORY]) == ["Action: Answer\nFinal Answer: 3"]
    request = chat_server.requests[0]
    assert request["model"] == "served"
    assert request["messages"] == HISTORY
    assert request["max_tokens"] == 64
    assert request["temperature"] == 0.0
    assert chat_server.headers[0]["authorization"] == "Bearer sk-secret"


def retry_counts(server: ChatServer) -> list[str]:
    """The retry number the SDK put on each request it sent (our code sends none)."""
    return [headers.get("x-stainless-retry-count", "") for headers in server.headers]


@pytest.mark.parametrize("status", [500, 503, 429])
def test_the_sdk_retries_a_server_error_or_rate_limit(chat_server: ChatServer, status: int):
    chat_server.push(Reply(status=status, content="busy"), Reply(content="done"))
    assert make_model(chat_server).generate([HISTORY]) == ["done"]
    assert retry_counts(chat_server) == ["0", "1"]


def retry_waits(caplog: pytest.LogCaptureFixture) -> list[float]:
    """The waits the SDK logged before its retries."""
    found = [re.search(r"in ([0-9.]+) seconds", r.getMessage()) for r in caplog.records]
    return [float(match.group(1)) for match in found if match]


def test_the_sdk_waits_as_long_as_retry_after_says(
    chat_server: ChatServer, caplog: pytest.LogCaptureFixture
):
    chat_server.push(Reply(status=429, headers={"retry-after": "0.3"}), Reply(content="done"))
    with caplog.at_level(logging.INFO, logger="openai"):
        assert make_model(chat_server).generate([HISTORY]) == ["done"]
    assert retry_waits(caplog) == [0.3]
    assert retry_counts(chat_server) == ["0", "1"]


def test_an_unreadable_retry_after_falls_back_to_the_sdks_backoff(
    chat_server: ChatServer, caplog: pytest.LogCaptureFixture
):
    chat_server.push(Reply(status=429, headers={"retry-after": "soon"}), Reply(content="done"))
    with caplog.at_level(logging.INFO, logger="openai"):
        assert make_model(chat_server).generate([HISTORY]) == ["done"]
    [wait] = retry_waits(caplog)
    assert 0 < wait <= 0.5  # the SDK's first back-off, with its jitter


def test_a_retry_after_of_an_hour_is_not_waited_for(chat_server: ChatServer):
    chat_server.push(Reply(status=429, content="come back later", headers={"retry-after": "3600"}))
    with pytest.raises(AgentError, match="gave up after 1 attempt: RateLimitError") as caught:
        make_model(chat_server).generate([HISTORY])
    assert caught.value.status == SessionStatus.AGENT_UNKNOWN_ERROR
    assert len(chat_server.requests) == 1


def test_retried_after_a_hang(chat_server: ChatServer):
    chat_server.push(Reply(hang=5.0, content="too late"), Reply(content="in time"))
    assert make_model(chat_server, timeout=1.5).generate([HISTORY]) == ["in time"]
    assert len(chat_server.requests) == 2


def test_gives_up_with_the_cause_kept(chat_server: ChatServer):
    chat_server.push(*[Reply(status=500, content="broken")] * 3)
    with pytest.raises(AgentError, match="after 3 attempts") as caught:
        make_model(chat_server).generate([HISTORY])
    assert caught.value.status == SessionStatus.AGENT_UNKNOWN_ERROR
    assert "broken" in str(caught.value.__cause__)
    assert retry_counts(chat_server) == ["0", "1", "2"]


def test_a_server_that_always_hangs_ends_as_an_agent_error(chat_server: ChatServer):
    chat_server.push(*[Reply(hang=4.0)] * 2)
    with pytest.raises(AgentError, match="Timeout"):
        make_model(chat_server, timeout=1.0, max_retries=1).generate([HISTORY])


def test_context_overflow_is_the_context_limit_status(chat_server: ChatServer):
    message = "This model's maximum context length is 4096 tokens. However, you requested 5000."
    chat_server.push(Reply(status=400, content=message))
    with pytest.raises(AgentContextLimitError) as caught:
        make_model(chat_server).generate([HISTORY])
    assert caught.value.status == SessionStatus.AGENT_CONTEXT_LIMIT
    assert len(chat_server.requests) == 1


def test_other_client_errors_are_not_retried(chat_server: ChatServer):
    chat_server.push(Reply(status=404, content="no such model"))
    with pytest.raises(AgentError, match="no such model"):
        make_model(chat_server).generate([HISTORY])
    assert len(chat_server.requests) == 1


def test_invalid_utf8_costs_characters_not_the_reply(chat_server: ChatServer):
    good = json.dumps({"choices": [{"message": {"role": "assistant", "content": "abcXYZ"}}]})
    chat_server.push(Reply(body=good.encode().replace(b"XYZ", b"\xff\xfe!")))
    [reply] = make_model(chat_server).generate([HISTORY])
    assert reply.startswith("abc") and reply.endswith("!") and "\ufffd" in reply


@pytest.mark.parametrize("content", ["", None])
def test_an_empty_reply_is_an_empty_string(chat_server: ChatServer, content: str | None):
    chat_server.push(Reply(content=content))
    assert make_model(chat_server).generate([HISTORY]) == [""]


def test_a_huge_reply_comes_back_whole(chat_server: ChatServer):
    chat_server.push(Reply(content="x" * 100_000))
    assert make_model(chat_server).generate([HISTORY]) == ["x" * 100_000]


@pytest.mark.parametrize("body", [b"not json", b'{"choices": []}'])
def test_a_malformed_body_is_an_agent_error(chat_server: ChatServer, body: bytes):
    chat_server.push(Reply(body=body))
    with pytest.raises(AgentError):
        make_model(chat_server).generate([HISTORY])


def test_a_batch_keeps_its_order(chat_server: ChatServer):
    histories = [[{"role": "user", "content": f"question {i}"}] for i in range(7)]
    replies = make_model(chat_server, concurrency=3).generate(histories)
    assert replies == [f"question {i}" for i in range(7)]
    assert len(chat_server.requests) == 7


def test_the_concurrency_limit_holds_across_callers(chat_server: ChatServer):
    chat_server.default = lambda request: time.sleep(0.05) or "ok"
    model = make_model(chat_server, concurrency=2)
    histories = [HISTORY] * 4
    callers = [threading.Thread(target=model.generate, args=(histories,)) for _ in range(3)]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join()
    assert len(chat_server.requests) == 12
    assert 1 <= chat_server.most_in_flight <= 2


def test_a_server_gone_after_the_start_is_an_agent_error_after_retries(chat_server: ChatServer):
    model = make_model(chat_server, max_retries=1)
    chat_server.close()
    with pytest.raises(AgentError, match="gave up after 2 attempts"):
        model.generate([HISTORY])


def test_no_server_is_one_clear_error_at_the_start():
    config = OpenAIModelConfig(name="down", base_url="http://127.0.0.1:9/v1", model="m")
    with pytest.raises(ModelConfigError, match="no server answers at http://127.0.0.1:9/v1"):
        OpenAIChatModel(config)


def test_an_unknown_model_is_one_clear_error_at_the_start(chat_server: ChatServer):
    with pytest.raises(ModelConfigError, match=r"serves \['served', 'm'\], not 'gpt-9'"):
        make_model(chat_server, model="gpt-9")


def test_a_url_without_the_api_root_is_one_clear_error(chat_server: ChatServer):
    with pytest.raises(ModelConfigError, match="usually ends in /v1"):
        make_model(chat_server, base_url=chat_server.base_url.removesuffix("/v1"))


def test_the_check_can_be_turned_off():
    config = OpenAIModelConfig(name="later", base_url="http://127.0.0.1:9/v1", model="m")
    OpenAIChatModel(config.model_copy(update={"check_server": False})).close()


def test_a_base_url_without_a_scheme_is_refused():
    with pytest.raises(ValueError, match="must start with http"):
        OpenAIModelConfig(name="x", base_url="127.0.0.1:8000/v1", model="m")
    assert issubclass(ModelConfigError, ValueError)


def test_a_config_with_the_old_retry_backoff_still_loads(caplog: pytest.LogCaptureFixture):
    with caplog.at_level(logging.WARNING):
        config = OpenAIModelConfig(name="x", base_url="http://h/v1", model="m", retry_backoff=1)
    assert config.retry_backoff == 1 and "retry_backoff is ignored" in caplog.text
