"""A tiny OpenAI-compatible chat-completions server (stdlib only) for offline tests.

``StubOpenAI`` serves ``POST /v1/chat/completions`` on 127.0.0.1 (a free port) from a thread. Each request
body is passed to ``responder(body) -> message`` (an OpenAI ``message`` dict: ``content`` and optionally
``tool_calls``); the server wraps it in a ``chat.completion`` envelope. ``requests`` keeps every body.
``delay`` (seconds, settable at any time) holds every answer back that long, like a hanging model; leaving
the context manager releases held requests at once. A request with ``"stream": true`` is answered with
server-sent events (LangGraph streams chat models in ``stream_mode="messages"``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Responder = Callable[[dict[str, Any]], dict[str, Any]]


def tool_call(name: str, args: dict[str, Any], call_id: str = "call_1") -> dict[str, Any]:
    """An assistant message that calls tool ``name`` with ``args``."""
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
    ]}


def text(content: str) -> dict[str, Any]:
    """A plain assistant message."""
    return {"role": "assistant", "content": content}


def last_content(body: dict[str, Any], role: str = "user") -> str:
    """The text of the newest message of ``role`` in a request body."""
    for m in reversed(body.get("messages", [])):
        if m.get("role") == role:
            c = m.get("content")
            return c if isinstance(c, str) else " ".join(p.get("text", "") for p in c or [])
    return ""


class StubOpenAI:
    """Context manager running the stub server; ``base_url`` is ``http://127.0.0.1:<port>/v1``."""

    def __init__(self, responder: Responder, delay: float = 0.0, drip: float = 0.0) -> None:
        self.responder = responder
        self.delay = delay
        self.drip = drip  # > 0: send the headers at once, then the body one byte every ``drip`` seconds
        self.requests: list[dict[str, Any]] = []
        self._closing = threading.Event()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server API
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"unknown path {self.path}"}})
                    return
                stub.requests.append(body)
                if stub.delay > 0 and stub._closing.wait(stub.delay):
                    return  # shutting down: drop the held request
                try:
                    message = stub.responder(body)
                except Exception as exc:  # noqa: BLE001 - report to the client as a server error
                    self._send(500, {"error": {"message": str(exc)}})
                    return
                finish = "tool_calls" if message.get("tool_calls") else "stop"
                if body.get("stream"):
                    self._stream(body, message, finish)
                    return
                self._send(200, {
                    "id": f"chatcmpl-{len(stub.requests)}", "object": "chat.completion", "created": 0,
                    "model": body.get("model", "stub"),
                    "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish,
                                 "logprobs": None}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                })

            def _stream(self, body: dict[str, Any], message: dict[str, Any], finish: str) -> None:
                """The answer as server-sent events: one delta with the whole message, a finish chunk, [DONE]."""
                delta: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
                if message.get("tool_calls"):
                    delta["tool_calls"] = [{"index": i, **tc} for i, tc in enumerate(message["tool_calls"])]
                head = {"id": f"chatcmpl-{len(stub.requests)}", "object": "chat.completion.chunk", "created": 0,
                        "model": body.get("model", "stub")}
                chunks = [{**head, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
                          {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}]
                data = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.end_headers()
                    self.wfile.write(data.encode())
                except OSError:  # the client gave up
                    pass

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    if stub.drip > 0:  # a server that trickles bytes: never idle long enough for a read timeout
                        self.wfile.flush()
                        for i in range(len(data)):
                            if stub._closing.wait(stub.drip):
                                return
                            self.wfile.write(data[i : i + 1])
                            self.wfile.flush()
                        return
                    self.wfile.write(data)
                except OSError:  # the client gave up (timed out) and closed the connection
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.block_on_close = False  # type: ignore[attr-defined]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def kinds(self) -> list[str]:
        """What each request was: ``structured`` (response_format), ``tools`` (tools bound) or ``plain``."""
        return ["structured" if "response_format" in b else "tools" if b.get("tools") else "plain" for b in self.requests]

    def __enter__(self) -> StubOpenAI:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._closing.set()
        self.server.shutdown()
        self.server.server_close()
