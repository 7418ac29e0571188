"""Sockets of clients used across several event loops (the CLI's asyncio.run per question)
are closed, not leaked: each loop closes its own httpx client as it shuts down."""

from __future__ import annotations

import asyncio
import gc
import json
import threading
import warnings
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from kgreason.kg.sparql.client import SparqlClient
from kgreason.llm import OpenAIChat


class KeepAliveServer:
    """HTTP/1.1 with keep-alive (the fault servers hang up after each reply, which hides
    pooled connections): answers any POST with an OpenAI chat completion that is also a
    SPARQL JSON result."""

    BODY = json.dumps(
        {
            "choices": [{"message": {"role": "assistant", "content": "fine"}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1},
            "head": {"vars": ["x"]},
            "results": {"bindings": [{"x": {"type": "uri", "value": "http://e/a"}}]},
        }
    ).encode()

    def __init__(self) -> None:
        body = self.BODY

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a: object) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length", 0)))
                self.send_response(200)
                self.send_header("content-type", "application/sparql-results+json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _resource_warnings(fn) -> list[str]:
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always", ResourceWarning)
        fn()
        gc.collect()
    return [str(w.message) for w in got if issubclass(w.category, ResourceWarning)]


def test_llm_adapter_across_event_loops_leaks_no_socket():
    server = KeepAliveServer()
    try:

        def use() -> None:
            llm = OpenAIChat("m", server.url + "/v1", "k", 10.0)
            for _ in range(3):
                c = asyncio.run(llm.complete([{"role": "user", "content": "x"}], stage="t"))
                assert c.text == "fine"
            asyncio.run(llm.aclose())

        assert _resource_warnings(use) == []
    finally:
        server.close()


def test_sparql_client_across_event_loops_leaks_no_socket():
    server = KeepAliveServer()
    try:

        def use() -> None:
            client = SparqlClient(server.url + "/sparql")
            for _ in range(3):
                assert len(asyncio.run(client.select("SELECT * {}")).rows) == 1
            asyncio.run(client.aclose())

        assert _resource_warnings(use) == []
    finally:
        server.close()
