"""StoreKG must answer every interface method exactly as MemoryKG does on the same data."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from kgreason.kg.base import Triple
from kgreason.kg.loaders import Source, load_all
from kgreason.kg.memory import MemoryKG
from kgreason.kg.store import StoreKG, build_store

RELS = ["acted_in", "directed_by", "born_in", "common.topic.alias", "type.object.type", "knows"]
NAMES = ["Zoë Kravitz", "Zoe Kravitz", "ZOE  kravitz", "Jean-Luc Godard", "Nijmegen", "Weeze"]


def _tsv_graph(path: Path) -> Path:
    rng = random.Random(7)
    nodes = [*NAMES, *(f"Entity {i}" for i in range(200)), "hub"]
    lines = []
    for _ in range(900):
        h = rng.choice(nodes[:40]) if rng.random() < 0.5 else rng.choice(nodes)
        t = "hub" if rng.random() < 0.15 else rng.choice(nodes)
        lines.append(f"{h}\t{rng.choice(RELS)}\t{t}")
    lines += lines[:50]  # duplicates
    lines.append("Weeze\tknows\tWeeze")  # self-loop
    path.write_text("\n".join(lines) + "\n")
    return path


def _nt_graph(path: Path) -> Path:
    fb = "http://rdf.freebase.com/ns/"
    rng = random.Random(11)
    mids = [f"m.0{i:03x}" for i in range(60)]
    out = []
    for i, m in enumerate(mids):
        if i % 5 == 0:
            continue  # CVT-like: no name
        name = NAMES[i % len(NAMES)] + ("" if i < 6 else f" {i}")
        out.append(f'<{fb}{m}> <{fb}type.object.name> "{name}"@en .')
        if i % 7 == 0:
            out.append(f'<{fb}{m}> <{fb}type.object.name> "Autre {i}"@fr .')
    for _ in range(300):
        r = rng.choice(
            [
                "location.location.adjoin_s",
                "common.topic.notable_types",
                "people.person.place_of_birth",
            ]
        )
        out.append(f"<{fb}{rng.choice(mids)}> <{fb}{r}> <{fb}{rng.choice(mids)}> .")
    out.append(f'<{fb}m.0001> <{fb}location.location.area> "123.5" .')
    out.append(f"<{fb}m.0002> <http://www.w3.org/2002/07/owl#sameAs> <http://example.org/x> .")
    path.write_text("\n".join(out) + "\n")
    return path


@pytest.fixture(params=["tsv", "nt", "nt-keep"], scope="module")
def pair(request, tmp_path_factory) -> tuple[MemoryKG, StoreKG, list[str]]:
    """nt: literal objects dropped (the default policy); nt-keep: literal objects as nodes."""
    d = tmp_path_factory.mktemp(request.param)
    f = _tsv_graph(d / "g.tsv") if request.param == "tsv" else _nt_graph(d / "g.nt")
    literals = "keep" if request.param == "nt-keep" else "drop"
    triples, names = load_all([Source(f, literals=literals)])
    mem = MemoryKG(triples, names)
    build_store([Source(f, literals=literals)], d / "store")
    store = StoreKG(d / "store")
    keys = sorted({x for t in triples for x in (t[0], t[2])} | set(names or {}))
    return mem, store, keys


async def test_names(pair):
    mem, store, keys = pair
    ids = [*keys, "not there", ""]
    assert await store.names(ids) == await mem.names(ids)


@pytest.mark.parametrize("limit", [None, 1, 3])
async def test_neighbors(pair, limit):
    mem, store, keys = pair
    ids = [*keys, "not there"]
    assert await store.neighbors(ids, limit_per_entity=limit) == await mem.neighbors(
        ids, limit_per_entity=limit
    )


@pytest.mark.parametrize("depth", [0, 1, 2, 3])
@pytest.mark.parametrize("max_triples", [1, 7, 40, 100_000])
async def test_expand(pair, depth, max_triples):
    mem, store, keys = pair
    rng = random.Random(depth * 1000 + max_triples)
    for seeds in ([keys[0]], rng.sample(keys, 2), [*rng.sample(keys, 3), "not there", keys[0]]):
        a = await store.expand(seeds, depth, max_triples=max_triples)
        b = await mem.expand(seeds, depth, max_triples=max_triples)
        assert (a.triples, a.truncated, a.truncation_reason, a.seeds) == (
            b.triples,
            b.truncated,
            b.truncation_reason,
            b.seeds,
        )
    if depth >= 2 and max_triples == 7:
        assert a.truncated  # the bound is really exercised


def _queries(keys: list[str], names: dict[str, str]) -> list[str]:
    shown = [names.get(k, k) for k in keys[:40]]
    return [
        *shown,
        *(s.lower() for s in shown),
        *(s[:-1] + "x" for s in shown if len(s) > 3),
        "zoe kravitz",
        "ZOË KRAVITZ",
        "Jean Luc Godard",
        "Nimegen",
        "m.0000",
        "",
        "qqqqqqqq",
    ]


@pytest.mark.parametrize("fuzzy", [True, False])
async def test_search(pair, fuzzy):
    mem, store, keys = pair
    names = await mem.names(keys)
    kinds = set()
    for q in _queries(keys, names):
        for limit in (3, 10):
            got = await store.search(q, limit=limit, fuzzy=fuzzy)
            assert got == await mem.search(q, limit=limit, fuzzy=fuzzy), q
            kinds |= {m.kind for m in got}
    assert kinds == ({"exact", "normalized", "fuzzy"} if fuzzy else {"exact", "normalized"})


async def test_contains(pair):
    mem, store, keys = pair
    nb = await mem.neighbors(keys[:30])
    present = [n.triple(k) for k, ns in nb.items() for n in ns]
    noise = [t for t in mem._triples if t.relation.startswith(("common.", "type.", "http"))]
    absent = [Triple(t.tail, t.relation, t.head) for t in present[:20]]
    absent += [Triple(keys[0], "no_such_relation", keys[1]), Triple("nope", "knows", keys[0])]
    ts = present + noise + absent
    assert noise  # raw noise triples are kept in the store
    assert await store.contains(ts) == await mem.contains(ts)


async def test_noise_prefixes_configurable(pair):
    _mem, store, keys = pair
    raw_store = StoreKG(store.path, noise_prefixes=())
    src = store.manifest.sources[0]
    triples, names = load_all([Source(src["path"], literals=src.get("literals", "drop"))])
    raw_mem = MemoryKG(triples, names, noise_prefixes=())
    a = await raw_store.neighbors(keys)
    assert a == await raw_mem.neighbors(keys)
    assert sum(map(len, a.values())) > sum(map(len, (await store.neighbors(keys)).values()))


@pytest.mark.parametrize("literals", ["drop", "keep"])
async def test_unnamed_cvt_nodes(tmp_path, literals):
    f = _nt_graph(tmp_path / "g.nt")
    build_store([Source(f, literals=literals)], tmp_path / "s")
    store = StoreKG(tmp_path / "s")
    names = await store.names(["m.0000", "m.0001", "m.0007", "123.5"])
    assert names["m.0000"] == "Unnamed Entity"  # CVT-like, no name
    assert names["m.0001"] == "Zoe Kravitz"
    assert names["m.0007"] == "Zoe Kravitz 7"  # English label preferred over "Autre 7"@fr
    assert store.manifest.counts["unnamed"] == 12
    area = [n for n in (await store.neighbors(["m.0001"]))["m.0001"] if n.entity == "123.5"]
    if literals == "keep":
        assert names["123.5"] == "123.5"  # literal node named by its value
        assert [n.relation for n in area] == ["location.location.area"]
        assert store.manifest.counts["literal_triples_dropped"] == 0
    else:
        assert "123.5" not in names and area == []
        assert store.manifest.counts["literal_triples_dropped"] == 1
    assert store.manifest.sources[0]["literals"] == literals


def test_fingerprint_is_content_hash(tmp_path):
    f = _tsv_graph(tmp_path / "g.tsv")
    build_store([Source(f)], tmp_path / "a")
    build_store([Source(f)], tmp_path / "b")
    assert StoreKG(tmp_path / "a").fingerprint() == StoreKG(tmp_path / "b").fingerprint()
    f.write_text(f.read_text() + "x\tknows\ty\n")
    build_store([Source(f)], tmp_path / "a", force=True)
    assert StoreKG(tmp_path / "a").fingerprint() != StoreKG(tmp_path / "b").fingerprint()


@pytest.mark.parametrize("max_triples", [5, 60, 100_000])
async def test_expand_in_small_slices(pair, monkeypatch, max_triples):
    """Frontier chunks and slices of a hub's edges (sized for big graphs) keep the answer."""
    from kgreason.kg.store import graph as graph_mod

    monkeypatch.setattr(graph_mod, "CHUNK_EDGES", 2)
    mem, store, keys = pair
    for seeds in ([keys[0]], ["hub", keys[3]], keys[5:8]):
        a = await store.expand(seeds, 3, max_triples=max_triples)
        b = await mem.expand(seeds, 3, max_triples=max_triples)
        assert (a.triples, a.truncated) == (b.triples, b.truncated)
