"""The same PoG question through the embedded store and through Virtuoso gives the same
paths; and an endpoint that goes away mid-question ends it with a named reason."""

from __future__ import annotations

import contextlib
import json
import socket
import threading

import pytest
from tests.kg.conftest import virtuoso  # noqa: F401  (session fixture)
from tests.pog.test_e2e_nijmegen import FIXTURE, GERMANY, QUESTION, script
from typer.testing import CliRunner

from kgreason.cli import app
from kgreason.embed.static import StaticEmbedder
from kgreason.kg.sparql import SparqlKG
from kgreason.kg.store import StoreKG
from kgreason.llm.testing import ScriptedLLM
from kgreason.pog.pipeline import PoG
from kgreason.pog.settings import PoGSettings

pytestmark = pytest.mark.integration
SETTINGS = PoGSettings()


@pytest.fixture(scope="module")
def embedder() -> StaticEmbedder:
    return StaticEmbedder()


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> StoreKG:
    out = tmp_path_factory.mktemp("kg") / "nijmegen"
    r = CliRunner().invoke(app, ["kg", "build", str(FIXTURE), "--out", str(out)])
    assert r.exit_code == 0, r.stderr
    return StoreKG(out)


def shape(result) -> list[list[tuple]]:
    return [
        [(h.src, h.relation, h.dst, h.forward, tuple(sorted(h.triples))) for h in p.hops]
        for p in result.paths
    ]


async def test_store_and_virtuoso_give_the_same_paths(store, virtuoso, embedder) -> None:  # noqa: F811
    local = await PoG(store, ScriptedLLM(script()), embedder, SETTINGS).ask_async(QUESTION)
    async with SparqlKG(virtuoso.url, dialect="freebase") as remote_kg:
        llm = ScriptedLLM(script())
        remote = await PoG(remote_kg, llm, embedder, SETTINGS).ask_async(QUESTION)
    for r in (local, remote):
        assert r.ok, r.error
        assert [a.id for a in r.answers] == [GERMANY]
        assert r.unverified_triples == []
    assert shape(local) == shape(remote) and local.paths
    assert local.phase == remote.phase
    assert (local.subgraph.reduced_entities, local.subgraph.reduced_triples) == (
        remote.subgraph.reduced_entities,
        remote.subgraph.reduced_triples,
    )
    local_steps = [t.get("pruning") for t in local.trace if "pruning" in t]
    assert local_steps == [t.get("pruning") for t in remote.trace if "pruning" in t]


class TcpProxy:
    """Loopback TCP forwarder to a server; `cut()` makes the endpoint vanish at once."""

    def __init__(self, target: tuple[str, int]):
        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.conns: list[socket.socket] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            with self.lock:
                self.conns += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := src.recv(65536):
                dst.sendall(data)
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)

    def cut(self) -> None:
        with contextlib.suppress(OSError):  # wakes the blocked accept() on Linux
            self.listener.shutdown(socket.SHUT_RDWR)
        self.listener.close()
        with self.lock:
            for c in self.conns:
                with contextlib.suppress(OSError):
                    c.shutdown(socket.SHUT_RDWR)
                c.close()


async def test_endpoint_failing_mid_question_is_named(virtuoso, embedder) -> None:  # noqa: F811
    host_port = virtuoso.url.split("//", 1)[1].split("/", 1)[0]
    host, port = host_port.rsplit(":", 1)
    proxy = TcpProxy((host, int(port)))
    url = virtuoso.url.replace(host_port, f"127.0.0.1:{proxy.port}")

    def supplement(messages):
        proxy.cut()  # the endpoint goes away while the LLM is thinking
        return '[{"predicted": "Germany", "indicator": "answer(\\"Germany\\") - x - \\"France\\""}]'

    llm = ScriptedLLM(script(evaluate=["{No}"] * 5, supplement=supplement))
    async with SparqlKG(url, dialect="freebase", max_retries=0, timeout_s=5) as kg:
        r = await PoG(kg, llm, embedder, PoGSettings()).ask_async(QUESTION)
    assert r.error_kind == "sparql-unreachable", r.error  # named by the SPARQL client
    assert f"127.0.0.1:{proxy.port}" in r.error
    assert r.answers == [] and r.phase is None
    # what was found before the failure is kept: phase-1 steps, their paths, the usage
    assert [t["phase"] for t in r.trace if "candidates" in t][:2] == ["topic-entity-path"] * 2
    assert r.paths and r.usage["supplement"]["calls"] == 1
    assert r.analysis is not None and r.subgraph.entities > 0


def test_cli_ask_on_virtuoso_llm_free(virtuoso, monkeypatch, tmp_path) -> None:  # noqa: F811
    for k in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "KGREASON_CONFIG"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("KGREASON_EMBED__BACKEND", "static")
    monkeypatch.chdir(tmp_path)
    args = ["ask", QUESTION, "--sparql", virtuoso.url, "--dialect", "freebase", "--json"]
    r = CliRunner().invoke(app, [*args, "--topic", "m.0d2hgq", "--topic", "France"])
    assert r.exit_code == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["mode"] == "llm-free" and data["answers"] == [] and data["candidates"]
    assert [t["id"] for t in data["topic_entities"]] == ["m.0d2hgq", "m.0f4kq"]
    r = CliRunner().invoke(app, [*args[:-1], "--topic", "m.zzzz"])
    assert r.exit_code != 0 and "m.zzzz" in r.stderr and len(r.stderr.splitlines()) == 1
