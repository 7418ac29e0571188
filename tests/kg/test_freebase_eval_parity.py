"""`kgreason eval webqsp --method llm-free` on a store built from a Freebase dump gives the
answers the SPARQL path gives on the same triples (the dump's reference cleaning, loaded
into Oxigraph and into Virtuoso), question by question, mids as ids."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.kg.conftest import _start
from tests.kg.fbdump import generator
from tests.servers import RunningServer, start_oxigraph, start_virtuoso
from typer.testing import CliRunner

from kgreason.cli import app
from kgreason.kg.freebase import build_freebase

QUESTIONS = 20


@pytest.fixture(scope="module")
def kg(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """(store built from the dump, the same kept triples as N-Triples, data dir)."""
    d = tmp_path_factory.mktemp("fbeval")
    gen = generator()
    gen.generate(d / "dump.gz", 12_000, seed=7)
    build_freebase(d / "dump.gz", d / "store")
    gen.clean(d / "dump.gz", d / "clean.nt")
    data = d / "data" / "kgqa" / "freebase-questions" / "aog"
    data.mkdir(parents=True)
    gen.questions(d / "store", data / "WebQSP.json", QUESTIONS, seed=3)
    return d / "store", d / "clean.nt", d / "data"


@pytest.fixture(scope="module", params=["oxigraph", "virtuoso"])
def endpoint(
    request: pytest.FixtureRequest, kg: tuple[Path, Path, Path], tmp_path_factory
) -> Iterator[RunningServer]:
    start = start_oxigraph if request.param == "oxigraph" else start_virtuoso
    server = _start(start, tmp_path_factory.mktemp(request.param), [kg[1]])
    yield server
    server.stop()


def _answers(args: list[str], data: Path, out: Path) -> dict[str, list[str]]:
    r = CliRunner().invoke(
        app,
        [
            *("eval", "webqsp", "--data-dir", str(data), *args, "--method", "llm-free"),
            *("--embedder", "static", "--out", str(out)),
        ],
    )
    assert r.exit_code == 0, r.stderr
    rows = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    return {x["id"]: x.get("answer_ids") or [] for x in rows}


def test_store_and_sparql_answer_alike(
    kg: tuple[Path, Path, Path],
    endpoint: RunningServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store, _, data = kg
    monkeypatch.setenv("KGREASON_POG__D_MAX", "2")
    local = _answers(["--kg", str(store)], data, tmp_path / "store")
    remote = _answers(
        ["--sparql", endpoint.url, "--dialect", "freebase"], data, tmp_path / "sparql"
    )
    assert len(local) == QUESTIONS and local.keys() == remote.keys()
    assert sum(bool(a) for a in local.values()) >= QUESTIONS // 2  # not all empty
    assert {q: remote[q] for q in local} == local
