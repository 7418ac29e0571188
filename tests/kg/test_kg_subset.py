"""`kg subset`: the subgraph every question's walk takes, as a store of its own."""

from __future__ import annotations

import asyncio
import json
import zlib
from pathlib import Path

import numpy as np
import pytest
from tests.kg.fbdump import generator
from typer.testing import CliRunner

from kgreason.cli import app
from kgreason.eval import datasets
from kgreason.eval.kg_subset import cut, write
from kgreason.kg.freebase import build_freebase
from kgreason.kg.settings import DEFAULT_NOISE_PREFIXES
from kgreason.kg.store import StoreKG
from kgreason.kg.store.format import Manifest, StoreFormatError
from kgreason.kg.store.walks import WALKS, WALKS_BIN, Walks
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
        taken = cut(kg, records, 2, settings, tmp_path)
        eids, report = taken.eids, taken.report
        write(kg, taken, records, tmp_path / "sub", force=False)
        sub = StoreKG(tmp_path / "sub")
        sub.walks = Walks(tmp_path)  # none: every walk below runs live on the subset
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


def _walk(kg: StoreKG, res) -> list[tuple[str, str, str, bool]]:
    """A walk as it came: its triples in discovery order, each with the side that read it."""
    rows = kg.triples_of(np.asarray(res.eids))
    return [(t.head, t.relation, t.tail, bool(i)) for t, i in zip(rows, res.rows[3], strict=True)]


def test_cut_walks_replay_on_the_subset(full: tuple[Path, Path], tmp_path: Path) -> None:
    """A walk a bound cut depends on edges the subset does not hold: the subset replays the
    full store's walk (same edges, order, rows and cut report), and only for the seeds and
    settings it was recorded with."""
    store, qfile = full
    records = datasets.load("webqsp", path=qfile).records
    settings = PoGSettings(max_subgraph_triples=300)
    kg = StoreKG(store)
    try:
        taken = cut(kg, records, 2, settings, tmp_path)
        assert taken.report.truncated > 0
        write(kg, taken, records, tmp_path / "sub", force=False)
        sub = StoreKG(tmp_path / "sub")
        try:
            differ, cut_keys = 0, set()
            for rec in records:
                topics = list(rec.topic_entities)
                a, ra = walk_subgraph(kg, topics, settings, depth=2)
                b, rb = walk_subgraph(sub, topics, settings, depth=2)
                assert b.replayed == a.truncated and not a.replayed  # only cut walks recorded
                cut_keys |= {tuple(topics)} if a.truncated else set()
                assert _walk(kg, ra) == _walk(sub, rb)
                assert (a.truncated, a.truncation_reason) == (b.truncated, b.truncation_reason)
                assert a.cut_detail == b.cut_detail
                assert b.bounds_hit() == [
                    x + " (the full store's walk, replayed by this subset)" for x in a.bounds_hit()
                ]
                rows_a = [np.asarray(x) for x in ra.rows]
                b_triples = sub.triples_of(np.asarray(rb.eids))
                # the rows name the same nodes and relations in the subset's numbering
                heads = [t.head for t in b_triples]
                assert heads == [t.head for t in kg.triples_of(np.asarray(ra.eids))]
                assert len(rows_a[0]) == len(rb.rows[0])
                live, rl = walk_subgraph(
                    sub, topics, settings.model_copy(update={"max_subgraph_triples": 301}), depth=2
                )
                assert not live.replayed
                differ += a.truncated and _walk(kg, ra) != _walk(sub, rl)
            assert differ > 0  # without the replay, cut walks would differ
            assert len(sub.walks) == len(cut_keys)
            _warms_for_its_walks(sub, kg, records, settings)
        finally:
            sub.close()
    finally:
        kg.close()
    pairs = [
        {(p["relation"], p["inverse"]) for p in Manifest.read(d).inverse_relations}
        for d in (store, tmp_path / "sub")
    ]
    assert pairs[1] <= pairs[0]  # the full store's pairs, not ones found on the subset alone


def _warms_for_its_walks(sub: StoreKG, full: StoreKG, records: list, settings: PoGSettings) -> None:
    """A subset is small, but its replayed subgraphs are the large store's: `eval` and
    `serve` warm the compiled kernels for it by its largest walk (replaying runs no walk
    kernel that would load them), not by its own size."""
    from kgreason import heap

    largest = sub.walks.largest()
    walked = [walk_subgraph(full, list(r.topic_entities), settings, depth=2)[1] for r in records]
    assert 0 < largest == max(len(res.eids) for res in walked)
    assert len(full.walks) == 0 and full.walks.largest() == 0
    calls: list[str] = []
    mp = pytest.MonkeyPatch()
    try:
        mp.setattr(heap, "warm_all", lambda: calls.append("warm") or True)
        mp.setattr(heap, "WARM_WALK_EDGES", largest + 1)
        assert heap.warm_kernels(sub) is False and not calls
        mp.setattr(heap, "WARM_WALK_EDGES", largest)
        assert heap.warm_kernels(sub) is True and calls == ["warm"]
    finally:
        mp.undo()


def test_unreadable_walks_name_the_file(full: tuple[Path, Path], tmp_path: Path) -> None:
    store, qfile = full
    records = datasets.load("webqsp", path=qfile).records[:3]
    settings = PoGSettings(max_subgraph_triples=300)
    kg = StoreKG(store)
    try:
        write(kg, cut(kg, records, 2, settings, tmp_path), records, tmp_path / "sub", force=False)
    finally:
        kg.close()
    topics = list(records[0].topic_entities)
    for bad in ("{not json", '{"version": 99, "walks": []}', '{"version": 2}'):
        (tmp_path / "sub" / WALKS).write_text(bad)
        sub = StoreKG(tmp_path / "sub")
        with pytest.raises(StoreFormatError, match=r"walks\.json"):
            walk_subgraph(sub, topics, settings, depth=2)
        sub.close()
    (tmp_path / "sub" / WALKS).write_text('{"version": 1, "walks": []}')  # an older subset
    sub = StoreKG(tmp_path / "sub")
    with pytest.raises(StoreFormatError, match="cut the subset again"):
        walk_subgraph(sub, topics, settings, depth=2)
    sub.close()
    key = [topics, 2, 300, "edge-order", list(DEFAULT_NOISE_PREFIXES)]
    eid_z = zlib.compress(np.array([10**9], np.int32).tobytes())
    inn_z = zlib.compress(np.packbits(np.array([False])).tobytes())
    entry = {"key": key, "count": 1, "figures": {}, "detail": "", "dtype": "int32", "at": 0}
    cases = [  # (walks.bin, its entry, what the error says)
        (eid_z + inn_z, {"eid_bytes": len(eid_z), "inn_bytes": len(inn_z)}, "do not fit"),
        (b"\x00garbage", {"eid_bytes": 4, "inn_bytes": 4}, "unreadable recorded walks"),
    ]
    for blob, where, says in cases:
        (tmp_path / "sub" / WALKS).write_text(
            json.dumps({"version": 2, "walks": [{**entry, **where}]})
        )
        (tmp_path / "sub" / WALKS_BIN).write_bytes(blob)
        sub = StoreKG(tmp_path / "sub")
        with pytest.raises(StoreFormatError, match=says):
            walk_subgraph(sub, topics, settings, depth=2)
        sub.close()


def test_eval_answers_on_the_subset_are_the_full_stores(
    full: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`kgreason eval --method llm-free` on the subset gives every question the full
    store's answers, bound-cut questions included (the bound is small enough to cut most)."""
    store, qfile = full
    data = tmp_path / "data" / "kgqa" / "freebase-questions" / "aog"
    data.mkdir(parents=True)
    (data / "WebQSP.json").write_text(qfile.read_text())
    monkeypatch.setenv("KGREASON_POG__D_MAX", "2")
    monkeypatch.setenv("KGREASON_POG__MAX_SUBGRAPH_TRIPLES", "300")
    r = CliRunner().invoke(
        app,
        [
            *("kg", "subset", str(store), "--dataset", "webqsp", "--questions", str(qfile)),
            *("--hops", "2", "--out", str(tmp_path / "sub"), "--json"),
        ],
    )
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["truncated"] > 0
    runs = {}
    for name, kg in (("full", store), ("sub", tmp_path / "sub")):
        out = tmp_path / f"run-{name}"
        args = ["eval", "webqsp", "--data-dir", str(tmp_path / "data"), "--kg", str(kg)]
        r = CliRunner().invoke(
            app, [*args, "--method", "llm-free", "--embedder", "static", "--out", str(out)]
        )
        assert r.exit_code == 0, r.stderr
        rows = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
        runs[name] = {x["id"]: (x.get("answer_ids"), x["extra"]["bounds_hit"]) for x in rows}
    assert len(runs["full"]) == 25 and runs["full"].keys() == runs["sub"].keys()
    for q, (answers, _) in runs["full"].items():
        assert runs["sub"][q][0] == answers, q
    assert any(b for _, b in runs["full"].values())  # some walks were cut
    replayed = [b for _, bs in runs["sub"].values() for b in bs if "replayed" in b]
    assert replayed
