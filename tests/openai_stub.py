"""A tiny OpenAI-compatible chat-completions server (stdlib only) for offline tests.

``StubOpenAI`` serves ``POST /v1/chat/completions`` on 127.0.0.1 (a free port) from a thread. Each request
body is passed to ``responder(body) -> message`` (an OpenAI ``message`` dict: ``content`` and optionally
``tool_calls``); the server wraps it in a ``chat.completion`` envelope. ``requests`` keeps every body.
``delay`` (seconds, settable at any time) holds every answer back that long, like a hanging model; leaving
the context manager releases held requests at once. A request with ``"stream": true`` is answered with
server-sent events (LangGraph streams chat models in ``stream_mode="messages"``). A responder that raises
``StubError(status, message)`` gets that HTTP status (any other exception: 500).

Answers local models give around structured output, for the tests of ``memory_graph.structured``: ``think``
(a reasoning block first, closed or not), ``fenced`` (a ```json fence with text around it), ``tool_call``;
``sequence`` answers a scripted series (e.g. broken JSON, then good JSON); ``shape`` names a request's shape.
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


def think(doc: dict[str, Any], *, closed: bool = True, opened: bool = True) -> dict[str, Any]:
    """An answer with a reasoning block before the JSON document ``doc``; ``opened=False``: the block's opening
    tag is missing (the chat template wrote it); ``closed=False``: the block never ends (only reasoning)."""
    reasoning = "The user says where they live, so the location is {\"value\": \"draft\"} maybe.\n"
    if not closed:
        return text(f"<think>\n{reasoning}")
    return text(f"{'<think>' if opened else ''}\n{reasoning}</think>\n{json.dumps(doc)}")


def fenced(doc: dict[str, Any]) -> dict[str, Any]:
    """An answer with the JSON document in a ```json fence, text before and after."""
    return text(f"Here is the result:\n```json\n{json.dumps(doc, indent=2)}\n```\nLet me know if you need more.")


class StubError(Exception):
    """Raised by a responder: the server answers with HTTP ``status`` and ``message``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def sequence(*answers: dict[str, Any] | StubError) -> Responder:
    """A responder giving ``answers`` in order, the last one again for every further request; an answer that
    is a ``StubError`` is raised."""
    queue = list(answers)

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        answer = queue.pop(0) if len(queue) > 1 else queue[0]
        if isinstance(answer, StubError):
            raise answer
        return answer

    return respond


def shape(body: dict[str, Any]) -> str:
    """A request's structured-output shape: ``json_schema`` / ``json_object`` (its ``response_format``),
    ``tools`` (tools bound) or ``plain``."""
    if "response_format" in body:
        return str(body["response_format"]["type"])
    return "tools" if body.get("tools") else "plain"


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
                except StubError as exc:
                    self._send(exc.status, {"error": {"message": str(exc)}})
                    return
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
