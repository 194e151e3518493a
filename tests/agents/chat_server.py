"""A small OpenAI-compatible chat-completions server for tests, replaying scripted replies."""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """What the server does for one request."""

    status: int = 200
    content: str | None = "OK."
    tool_calls: list[dict[str, Any]] | None = None  # the reply's calls, in the OpenAI shape
    body: bytes | None = None  # sent as is instead of a completion built from `content`
    hang: float = 0.0  # seconds to wait before answering
    headers: dict[str, str] = field(default_factory=dict)


class ChatServer:
    """An OpenAI-compatible chat-completions server that replays scripted replies.

    With the script empty it answers with `default(request)`, a text or a `Reply` (by
    default: echo the last message's content). Streamed requests get server-sent events.
    """

    def __init__(self) -> None:
        self.script: deque[Reply] = deque()
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.default = lambda request: request["messages"][-1]["content"]
        self.models = ["served", "m"]  # what GET /v1/models lists
        self.in_flight = 0
        self.most_in_flight = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._server.block_on_close = False
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()

    @property
    def base_url(self) -> str:
        """The API root to give the client."""
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def push(self, *replies: Reply) -> None:
        """Queue replies for the next requests."""
        self.script.extend(replies)

    def close(self) -> None:
        """Stop serving."""
        self._server.shutdown()
        self._server.server_close()

    def _next(self, request: dict[str, Any], headers: dict[str, str]) -> Reply:
        with self._lock:
            self.requests.append(request)
            self.headers.append(headers)
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
            if self.script:
                return self.script.popleft()
        made = self.default(request)
        return made if isinstance(made, Reply) else Reply(content=made)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                if self.path.rstrip("/") != "/v1/models":
                    self.send_error(404)
                    return
                data = [
                    {"id": name, "object": "model", "owned_by": "test"} for name in server.models
                ]
                self._send(Reply(), json.dumps({"object": "list", "data": data}).encode())

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                request = json.loads(self.rfile.read(length))
                reply = server._next(request, {k.lower(): v for k, v in self.headers.items()})
                try:
                    if reply.hang:
                        time.sleep(reply.hang)
                    body = reply.body
                    streamed = body is None and reply.status == 200 and request.get("stream")
                    if streamed:
                        body = _event_stream(_completion(request, reply))
                    elif body is None:
                        body = json.dumps(_completion(request, reply)).encode()
                finally:
                    # no longer in flight once the answer starts: the client may send the
                    # next request as soon as it has read this one
                    with server._lock:
                        server.in_flight -= 1
                try:
                    kind = "text/event-stream" if streamed else "application/json"
                    self._send(reply, body, kind)
                except OSError:
                    pass  # the client gave up (a timeout test)

            def _send(self, reply: Reply, body: bytes, kind: str = "application/json") -> None:
                self.send_response(reply.status)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(body)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

        return Handler


def _completion(request: dict[str, Any], reply: Reply) -> dict[str, Any]:
    if reply.status != 200:
        return {"error": {"message": reply.content, "type": "server_error", "code": reply.status}}
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": request.get("model", ""),
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": reply.content,
                    **({"tool_calls": reply.tool_calls} if reply.tool_calls else {}),
                },
                "finish_reason": "tool_calls" if reply.tool_calls else "stop",
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def _event_stream(completion: dict[str, Any]) -> bytes:
    """A completion as the server-sent events of a streamed one (`stream=True`): one chunk
    with the whole message, one with the finish reason, one with the usage, then [DONE]."""
    choice = completion["choices"][0]
    head = {k: completion[k] for k in ("id", "created", "model")}
    head["object"] = "chat.completion.chunk"
    delta = {k: v for k, v in choice["message"].items() if v is not None}
    if "tool_calls" in delta:
        delta["tool_calls"] = [{"index": i, **c} for i, c in enumerate(delta["tool_calls"])]
    chunks = [
        {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]},
        {**head, "choices": [], "usage": completion["usage"]},
    ]
    events = [f"data: {json.dumps(chunk)}\n\n" for chunk in chunks] + ["data: [DONE]\n\n"]
    return "".join(events).encode()
