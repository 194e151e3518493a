"""`OpenAIChatModel`: a model behind an OpenAI-compatible chat-completions server."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from lifelong_gym.extras import import_extra

from ..base import AgentContextLimitError, AgentError
from .base import LanguageModel, Message, Usage
from .config import ModelConfigError, OpenAIModelConfig

_CONTEXT_MARKERS = ("context length", "context_length", "context window", "too many tokens")


class OpenAIChatModel(LanguageModel):
    """The `openai` client, retrying as the SDK does (429, 5xx, timeouts, Retry-After), with a
    concurrency limit over all callers and failures mapped to the session statuses; each
    reply's tokens are the server's `usage` (None where it sends none)."""

    reports_usage = True

    def __init__(self, config: OpenAIModelConfig):
        openai = import_extra("openai", "openai", "an openai: model")

        self.config = config
        self._openai = openai
        self.client = openai.OpenAI(
            base_url=config.base_url,
            api_key=os.environ.get(config.api_key_env) or "EMPTY",
            timeout=config.timeout,
            max_retries=config.max_retries,
        )
        self._slots = threading.BoundedSemaphore(config.concurrency)
        # what the SDK retries; raised here only once its retries are spent (or refused)
        self._retried = (
            openai.RateLimitError,
            openai.InternalServerError,
            openai.APITimeoutError,
            openai.APIConnectionError,
        )
        if config.check_server:
            self._check_server()

    def _check_server(self) -> None:
        """Fail before any task if no server answers, the key is refused or the model is unknown."""
        url, fix = self.config.base_url, "or set check_server=false"
        try:
            check = self.client.with_options(timeout=min(self.config.timeout, 10.0), max_retries=0)
            listing = check.models.list()
            served = [model.id for model in listing]
        except self._openai.APIConnectionError as error:
            raise ModelConfigError(
                f"no server answers at {url} ({error}); start it or fix the URL, {fix}"
            ) from None
        except self._openai.AuthenticationError:
            raise ModelConfigError(
                f"the server at {url} refused the key in ${self.config.api_key_env}; set it, {fix}"
            ) from None
        except Exception as error:  # noqa: BLE001 - anything else: not the API we need
            raise ModelConfigError(
                f"{url} does not answer GET /models like an OpenAI-compatible API ({error}); "
                f"the URL usually ends in /v1, {fix}"
            ) from None
        if self.config.model not in served:
            raise ModelConfigError(
                f"the server at {url} serves {served[:20]}, not {self.config.model!r}; "
                f"fix the model name, {fix}"
            )

    def generate(
        self, batch: Sequence[Sequence[Message]], tools: Sequence[dict[str, Any]] | None = None
    ) -> list[str]:
        """One reply per history, at most `concurrency` requests in flight (over all callers).

        With `tools` the request offers them (`tools=`); a reply with `tool_calls` comes back
        as the assistant message in JSON, which an environment with tools accepts.
        """
        if len(batch) <= 1:
            answers = [self._complete(messages, tools) for messages in batch]
        else:
            with ThreadPoolExecutor(min(self.config.concurrency, len(batch))) as pool:
                answers = list(pool.map(lambda messages: self._complete(messages, tools), batch))
        self.usage.add([usage for _reply, usage in answers])
        return [reply for reply, _usage in answers]

    def _complete(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None
    ) -> tuple[str, Usage]:
        try:
            with self._slots:  # held through the SDK's retries: a retry is a request in flight
                return self._request(messages, tools)
        except self._retried as error:
            attempts = _attempts(error)
            raise AgentError(
                f"model {self.config.name!r} at {self.config.base_url}: gave up after "
                f"{attempts} attempt{'s' * (attempts > 1)}: {type(error).__name__}: {error}"
            ) from error
        except self._openai.BadRequestError as error:
            if any(marker in str(error).lower() for marker in _CONTEXT_MARKERS):
                raise AgentContextLimitError(f"model {self.config.name!r}: {error}") from error
            raise AgentError(f"model {self.config.name!r}: {error}") from error
        except AgentError:
            raise
        except Exception as error:
            raise AgentError(
                f"model {self.config.name!r}: {type(error).__name__}: {error}"
            ) from error

    def _request(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None
    ) -> tuple[str, Usage]:
        options: dict[str, Any] = {"temperature": self.config.temperature}
        if self.config.temperature > 0:
            options["top_p"] = self.config.top_p
        if tools:
            # "auto" is the API's default with tools; llama.cpp's server needs it said
            options["tools"], options["tool_choice"] = list(tools), "auto"
        raw = self.client.chat.completions.with_raw_response.create(
            model=self.config.model,
            messages=list(messages),  # type: ignore[arg-type]
            max_tokens=self.config.max_new_tokens,
            **options,
        )
        # Decode ourselves so that a server sending invalid UTF-8 costs a few characters,
        # not the reply.
        body = json.loads(raw.http_response.content.decode("utf-8", errors="replace"))
        try:
            choice = body["choices"][0]
        except (KeyError, IndexError, TypeError) as error:
            raise AgentError(
                f"model {self.config.name!r}: a reply with no choices: {body!r:.300}"
            ) from error
        message = choice.get("message") or {}
        usage = _usage(body.get("usage"))
        if message.get("tool_calls"):
            call = {
                "role": "assistant",
                "content": message.get("content"),
                "tool_calls": message["tool_calls"],
            }
            return json.dumps(call), usage
        return message.get("content") or "", usage

    def close(self) -> None:
        """Close the HTTP connections."""
        self.client.close()


def _usage(reported: Any) -> Usage:
    """A reply's `usage` object as the server sent it; a count it did not send is None."""
    reported = reported if isinstance(reported, dict) else {}

    def count(key: str) -> int | None:
        value = reported.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    return Usage(count("prompt_tokens"), count("completion_tokens"))


def _attempts(error: Exception) -> int:
    """How many requests the SDK sent before giving up (it numbers its retries in a header)."""
    request = getattr(error, "request", None)
    try:
        return int(request.headers.get("x-stainless-retry-count", 0)) + 1  # type: ignore[union-attr]
    except (AttributeError, TypeError, ValueError):
        return 1
