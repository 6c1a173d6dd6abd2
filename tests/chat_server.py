"""A real OpenAI-compatible chat-completions server on 127.0.0.1 for tests, with faults on demand.

Usage::

    with running_chat_server() as server:          # or the ``chat_server`` pytest fixture below
        server.behave("ok", score=4)               # default answer for every request
        server.then("500", "429")                  # one-off answers for the next requests, in order
        url = server.base_url                      # e.g. http://127.0.0.1:54321/v1
        ...
        server.request_count, server.requests[0].headers["authorization"], server.max_in_flight

Behaviours: ``ok`` (JSON judgement with ``score``), ``result`` (``Feedback … [RESULT] N`` text),
``slow`` (``ok`` after ``delay_s``), ``500``, ``429`` (with ``Retry-After: retry_after``), ``malformed``
(an answer with no readable score), ``off_scale`` (``score`` 9), ``bad_body`` (HTTP 200 whose body is not
JSON), ``echo_auth`` (HTTP 500 whose body repeats the Authorization header, as a careless proxy might).
``server.responder = fn(request_json) -> str`` replaces the ``ok`` text with a computed answer.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

BEHAVIOURS = ("ok", "result", "slow", "500", "429", "malformed", "off_scale", "bad_body", "echo_auth")


@dataclass
class Behaviour:
    kind: str = "ok"
    score: int = 4
    delay_s: float = 0.0
    retry_after: float | None = None
    feedback: str = "Correct result with clear steps."

    def __post_init__(self) -> None:
        if self.kind not in BEHAVIOURS:
            raise ValueError(f"unknown behaviour {self.kind!r}; choose from {BEHAVIOURS}")


@dataclass
class SeenRequest:
    path: str
    headers: dict[str, str]
    body: Any
    behaviour: str
    time: float


@dataclass
class ChatServer:
    """The handle a test holds: set behaviour, read what the server saw."""

    base_url: str = ""
    default: Behaviour = field(default_factory=Behaviour)
    queue: deque[Behaviour] = field(default_factory=deque)
    requests: list[SeenRequest] = field(default_factory=list)
    responder: Callable[[dict[str, Any]], str] | None = None
    require_key: str | None = None
    in_flight: int = 0
    max_in_flight: int = 0
    stopping: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def behave(self, kind: str, **opts: Any) -> None:
        """Answer every later request this way (after any queued one-offs)."""
        self.default = Behaviour(kind, **opts)

    def then(self, *kinds: str, **opts: Any) -> None:
        """Answer the next ``len(kinds)`` requests these ways, in order."""
        self.queue.extend(Behaviour(k, **opts) for k in kinds)

    def reset(self) -> None:
        with self.lock:
            self.default, self.responder = Behaviour(), None
            self.queue.clear()
            self.requests.clear()
            self.max_in_flight = 0

    @property
    def request_count(self) -> int:
        return len(self.requests)

    def _next(self) -> Behaviour:
        with self.lock:
            return self.queue.popleft() if self.queue else self.default


def _completion(text: str, model: str) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{time.monotonic_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    }


def _handler(state: ChatServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
            return

        def _send(self, status: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test): nothing to answer

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                body = json.loads(raw)
            except ValueError:
                body = None
            beh = state._next()
            headers = {k.lower(): v for k, v in self.headers.items()}
            with state.lock:
                state.requests.append(SeenRequest(self.path, headers, body, beh.kind, time.monotonic()))
                state.in_flight += 1
                state.max_in_flight = max(state.max_in_flight, state.in_flight)
            try:
                self._answer(beh, body, headers)
            finally:
                with state.lock:
                    state.in_flight -= 1

        def _answer(self, beh: Behaviour, body: Any, headers: dict[str, str]) -> None:
            if not self.path.endswith("/chat/completions"):
                return self._send(404, b'{"error": {"message": "not found"}}')
            if state.require_key and headers.get("authorization") != f"Bearer {state.require_key}":
                return self._send(401, b'{"error": {"message": "invalid api key"}}')
            if not isinstance(body, dict) or "messages" not in body or "model" not in body:
                return self._send(400, b'{"error": {"message": "model and messages are required"}}')
            if beh.delay_s or beh.kind == "slow":
                state.stopping.wait(beh.delay_s)
            model = str(body["model"])
            if beh.kind == "500":
                return self._send(500, b'{"error": {"message": "internal error"}}')
            if beh.kind == "429":
                extra = {"Retry-After": f"{beh.retry_after:g}"} if beh.retry_after is not None else {}
                return self._send(429, b'{"error": {"message": "rate limited"}}', extra)
            if beh.kind == "echo_auth":
                msg = json.dumps(
                    {"error": {"message": f"upstream rejected headers: {headers.get('authorization')}"}}
                )
                return self._send(500, msg.encode())
            if beh.kind == "bad_body":
                return self._send(200, b'{"id": "chatcmpl-1", "choices": [{"message": ')
            if beh.kind == "malformed":
                text = "The student did reasonably well overall, I would say."
            elif beh.kind == "off_scale":
                text = json.dumps({"score": 9, "feedback": "Excellent!"})
            elif beh.kind == "result":
                text = f"Feedback: {beh.feedback} [RESULT] {beh.score}"
            elif state.responder is not None:
                text = state.responder(body)
            else:
                text = json.dumps({"score": beh.score, "feedback": beh.feedback})
            return self._send(200, json.dumps(_completion(text, model)).encode())

    return Handler


@contextmanager
def running_chat_server(require_key: str | None = None) -> Iterator[ChatServer]:
    """Start the server on a free port of 127.0.0.1 in a thread; stop it on exit."""
    state = ChatServer(require_key=require_key)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    httpd.daemon_threads = True
    state.base_url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        state.stopping.set()
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


@pytest.fixture
def chat_server() -> Iterator[ChatServer]:
    """A fresh server per test (import this fixture into a test module to use it)."""
    with running_chat_server() as server:
        yield server
