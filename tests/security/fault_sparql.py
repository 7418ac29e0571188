"""TEST-ONLY: a SPARQL endpoint on 127.0.0.1 that misbehaves on purpose.

Paths: /ok (a valid one-row result), /endless (SPARQL JSON that never ends, no
Content-Length), /declared (declares a 300 MB body), /trickle (a valid result, one byte per
50 ms), /garbage (200 with a JSON content type and a non-JSON body), /bad400 (a rejected
query). Loops are bounded in bytes (`limit`) and time (`max_s`), stop when the client hangs
up or the server closes, and record the bytes they sent in `sent`.
"""

from __future__ import annotations

import contextlib
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

OK = b'{"head": {"vars": ["x"]}, "results": {"bindings": [{"x": {"type": "uri", "value": "http://e/a"}}]}}'
JSON = "application/sparql-results+json"


class FaultSparqlServer:
    def __init__(self, *, limit: int = 2 * 1024**3, max_s: float = 60.0):
        self.limit, self.max_s = limit, max_s
        self.sent: list[int] = []
        self.hits: dict[str, int] = {}
        self.stop = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length", 0)))
                server.hits[self.path] = server.hits.get(self.path, 0) + 1
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    server.respond(self)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = False  # close() joins handlers (their loops stop)
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    def respond(self, h: BaseHTTPRequestHandler) -> None:
        h.close_connection = True
        if h.path == "/bad400":
            return self._send(h, 400, b"Virtuoso 37000 Error SP030: syntax error", "text/plain")
        if h.path == "/garbage":
            return self._send(h, 200, b"\x00\x01 not json at all", JSON)
        if h.path == "/ok":
            return self._send(h, 200, OK, JSON)
        h.send_response(200)
        h.send_header("content-type", JSON)
        if h.path == "/declared":
            h.send_header("content-length", str(300 * 1024**2))
        h.end_headers()
        sent, t0 = 0, time.monotonic()
        try:
            if h.path == "/trickle":
                for b in OK:
                    if self.stop.is_set() or time.monotonic() - t0 > self.max_s:
                        break
                    h.wfile.write(bytes([b]))
                    h.wfile.flush()
                    sent += 1
                    self.stop.wait(0.05)
                return None
            h.wfile.write(b'{"head": {"vars": ["x"]}, "results": {"bindings": [')
            row = (b'{"x": {"type": "uri", "value": "http://e/' + b"a" * 200 + b'"}},') * 256
            while sent < self.limit and time.monotonic() - t0 < self.max_s:
                if self.stop.is_set():
                    break
                h.wfile.write(row)
                sent += len(row)
            return None
        finally:
            self.sent.append(sent)

    @staticmethod
    def _send(h: BaseHTTPRequestHandler, code: int, body: bytes, ctype: str) -> None:
        h.send_response(code)
        h.send_header("content-type", ctype)
        h.send_header("content-length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)

    def start(self) -> FaultSparqlServer:
        self.thread.start()
        return self

    def close(self) -> None:
        self.stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=10)
