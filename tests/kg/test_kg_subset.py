"""`kg subset`: the subgraph every question's walk takes, as a store of its own."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import numpy as np
import pytest
from tests.kg.fbdump import generator
from typer.testing import CliRunner

from kgreason.cli import app
from kgreason.eval import datasets
from kgreason.eval.kg_subset import cut, write
from kgreason.kg.freebase import build_freebase
from kgreason.kg.store import StoreKG
from kgreason.pog.settings import PoGSettings
from kgreason.pog.subgraph import walk_subgraph


@pytest.fixture(scope="module")
def full(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("sub")
    gen = generator()
    gen.generate(d / "dump.gz", 30_000, seed=2)
    build_freebase(d / "dump.gz", d / "full")
    gen.questions(d / "full", d / "q.json", 25, seed=4)
    return d / "full", d / "q.json"


def _triples(kg: StoreKG, eids: np.ndarray) -> set[tuple[str, str, str]]:
    return {(t.head, t.relation, t.tail) for t in kg.triples_of(eids)}


@pytest.mark.parametrize("cap", [200_000, 300])
def test_untruncated_walks_are_the_same_on_the_subset(
    full: tuple[Path, Path], tmp_path: Path, cap: int
) -> None:
    store, qfile = full
    records = datasets.load("webqsp", path=qfile).records
    settings = PoGSettings(max_subgraph_triples=cap)
    kg = StoreKG(store)
    try:
        eids, report = cut(kg, records, 2, settings)
        write(kg, eids, records, tmp_path / "sub", force=False)
        sub = StoreKG(tmp_path / "sub")
        try:
            assert _triples(sub, np.arange(sub.graph.n_edges)) == _triples(kg, eids)
            same = 0
            for rec in records:
                topics = list(rec.topic_entities)
                a, ra = walk_subgraph(kg, topics, settings, depth=2)
                b, rb = walk_subgraph(sub, topics, settings, depth=2)
                if not a.truncated:
                    assert not b.truncated
                    assert _triples(kg, ra.eids) == _triples(sub, rb.eids)
                    same += 1
            assert same == report.questions - report.truncated
            assert asyncio.run(sub.names(topics)) == asyncio.run(kg.names(topics))
        finally:
            sub.close()
    finally:
        kg.close()
    assert report.questions == 25 and report.with_gold_ids == 25
    assert report.gold_inside[1] <= report.gold_inside[2] <= 25
    assert report.gold_all_inside[2] <= report.gold_inside[2]
    if cap == 300:
        assert report.truncated > 0  # the bound really was exercised


def test_cli(full: tuple[Path, Path], tmp_path: Path) -> None:
    store, qfile = full
    args = ["kg", "subset", str(store), "--dataset", "webqsp", "--questions", str(qfile)]
    r = CliRunner().invoke(app, [*args, "--hops", "1", "--out", str(tmp_path / "s"), "--json"])
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["questions"] == 25 and out["triples"] > 0 and out["gold_inside"]["1"] <= 25
    r = CliRunner().invoke(app, [*args, "--hops", "1", "--out", str(tmp_path / "s")])
    assert r.exit_code == 1 and "already exists" in r.stderr
    r = CliRunner().invoke(
        app, ["kg", "subset", str(store), "--dataset", "nope", "--hops", "1", "--out", "x"]
    )
    assert r.exit_code == 1 and "unknown dataset" in r.stderr
