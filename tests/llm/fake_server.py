"""TEST-ONLY: a real OpenAI-protocol HTTP server on 127.0.0.1 (tests and bench/llm_bench.py).

Each request to /v1/chat/completions takes the next scripted behaviour from `plan`:
("ok", text), ("ok_no_usage", text), ("status", code), ("sleep", seconds), ("raw", body),
("drop", None) (hang up without replying), ("truncate", None) (hang up mid-body);
`reply_fn`, when set, answers every request the plan does not (instead of "ok"): a
function of the request body returning the reply's text;
fault replies: ("huge", n_bytes) streams a valid-looking reply of n_bytes with no
Content-Length, ("huge_declared", n_bytes) declares n_bytes and streams them, ("trickle",
seconds) sends a valid reply one byte per 50 ms for at most `seconds`. Fault loops are bounded
in bytes and time, stop when the client hangs up or the server closes, and record the bytes
they sent in `sent`. With the plan empty it answers "ok". Request bodies are kept in
`requests`.

Capability probes: `gets` maps a GET path ("/v1/models", "/version", "/api/version") to
(status, headers, JSON body); other GETs answer 404. Paths asked are kept in `get_paths`. `get_delay_s` maps a GET path to seconds
to wait before answering (a probe that times out; the wait ends when the server closes).
`reject_fields` maps a request field to an error message: a POST carrying that field is
answered 400 with the message (a server without structured outputs), and consumes no plan.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeOpenAIServer:
    def __init__(self) -> None:
        self.plan: list[tuple[str, Any]] = []
        self.requests: list[dict[str, Any]] = []
        #: bytes of body each fault reply ("huge", "trickle") managed to send
        self.sent: list[int] = []
        self.gets: dict[str, tuple[int, dict[str, str], Any]] = {}
        self.get_paths: list[str] = []
        self.get_delay_s: dict[str, float] = {}
        self.reject_fields: dict[str, str] = {}
        self.reply_fn: Any = None
        self.stop = threading.Event()
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                with server._lock:
                    server.get_paths.append(self.path)
                    status, headers, payload = server.gets.get(
                        self.path, (404, {}, {"error": {"message": "no such route"}})
                    )
                    delay = server.get_delay_s.get(self.path, 0.0)
                if delay and server.stop.wait(delay):
                    return
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                raw = json.dumps(payload).encode()
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                with server._lock:
                    req = json.loads(body)
                    server.requests.append(req)
                    refused = [m for f, m in server.reject_fields.items() if f in req]
                    if refused:
                        kind, arg = "error400", refused[0]
                    elif server.plan:
                        kind, arg = server.plan.pop(0)
                    elif server.reply_fn is not None:
                        kind, arg = "ok", server.reply_fn(req)
                    else:
                        kind, arg = "ok", "fine"
                # the client may have given up first (timeout test)
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    server.respond(self, kind, arg)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = False  # close() waits for handlers (they all end on stop)
        self.port = self.httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    def respond(self, h: BaseHTTPRequestHandler, kind: str, arg: Any) -> None:
        if h.path != "/v1/chat/completions":
            return self._send(h, 404, b'{"error": {"message": "no such route"}}')
        if kind == "sleep":
            if self.stop.wait(arg):
                return
            kind, arg = "ok", "late"
        if kind == "drop":  # close the connection without a reply
            h.close_connection = True
            h.connection.shutdown(2)
            return None
        if kind == "truncate":  # promise a longer body than is sent, then hang up
            h.send_response(200)
            h.send_header("content-type", "application/json")
            h.send_header("content-length", "1000")
            h.end_headers()
            h.wfile.write(b'{"choices": [')
            h.wfile.flush()
            h.close_connection = True
            h.connection.shutdown(2)
            return None
        if kind in ("huge", "huge_declared", "trickle"):
            return self._fault(h, kind, arg)
        if kind == "status":
            msg = json.dumps({"error": {"message": f"scripted {arg}", "type": "test"}})
            return self._send(h, arg, msg.encode())
        if kind == "error400":
            msg = json.dumps({"error": {"message": arg, "type": "invalid_request_error"}})
            return self._send(h, 400, msg.encode())
        if kind == "raw":
            return self._send(h, 200, arg)
        body: dict[str, Any] = {
            "id": "cmpl-test",
            "object": "chat.completion",
            "model": "fake-model",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": arg},
                    "finish_reason": "stop",
                }
            ],
        }
        if kind == "ok":
            body["usage"] = {"prompt_tokens": 11, "completion_tokens": 2, "total_tokens": 13}
        return self._send(h, 200, json.dumps(body).encode())

    def _fault(self, h: BaseHTTPRequestHandler, kind: str, arg: Any) -> None:
        head = b'{"choices": [{"message": {"role": "assistant", "content": "'
        tail = b'"}}]}'
        h.send_response(200)
        h.send_header("content-type", "application/json")
        if kind == "huge_declared":
            h.send_header("content-length", str(arg))
        h.end_headers()
        sent = 0
        try:
            if kind == "trickle":
                body = head + b"x" * 200 + tail
                deadline = time.monotonic() + arg
                for b in body:
                    if self.stop.is_set() or time.monotonic() > deadline:
                        break
                    h.wfile.write(bytes([b]))
                    h.wfile.flush()
                    sent += 1
                    self.stop.wait(0.05)
            else:
                h.wfile.write(head)
                sent = len(head)
                chunk = b"x" * 65536
                while sent < arg - len(tail) and not self.stop.is_set():
                    n = min(len(chunk), arg - len(tail) - sent)
                    h.wfile.write(chunk[:n])
                    sent += n
                h.wfile.write(tail)
                sent += len(tail)
        finally:
            with self._lock:
                self.sent.append(sent)
            h.close_connection = True

    @staticmethod
    def _send(h: BaseHTTPRequestHandler, code: int, payload: bytes) -> None:
        h.send_response(code)
        h.send_header("content-type", "application/json")
        h.send_header("content-length", str(len(payload)))
        h.end_headers()
        h.wfile.write(payload)

    def start(self) -> FakeOpenAIServer:
        self.thread.start()
        return self

    def close(self) -> None:
        self.stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()
