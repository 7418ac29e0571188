"""The embedded store and the SPARQL backends give the same answers for the same data.

One Freebase-style file (the Nijmegen fixture) is built into a StoreKG with the default
literal policy ("drop") and loaded into Virtuoso and Oxigraph, read through SparqlKG's
freebase dialect. No MemoryKG in between: each answer of the store is compared with each
endpoint's directly. Two differences are by design and checked as such:

* neighbour order: the store gives each entity's edges in file order (out-edges first),
  an endpoint has no file order and sorts them (tail first, then relation, then ID). The
  neighbour sets are identical, so `limit_per_entity` and a truncated `expand` keep the
  same number of items, but not necessarily the same ones;
* search: the store also finds a nameless node by its ID (`location.country`), an endpoint
  searches name literals only. Name queries give identical answers.
"""

from __future__ import annotations

import pytest
from tests.servers import FREEBASE_NT

from kgreason.kg.base import KGError, Triple
from kgreason.kg.loaders import Source
from kgreason.kg.sparql import SparqlKG
from kgreason.kg.store import StoreKG, build_store

pytestmark = pytest.mark.integration

BACKENDS = [
    # (server fixture, page_size, batch_size): small pages and batches on purpose
    ("virtuoso", 10_000, 200),
    ("virtuoso", 4, 3),
    ("oxigraph", 3, 5),
]
SEEDS = [["m.0d2hgq"], ["m.0d2hgq", "m.0f4kq"], ["m.03vp2t", "m.0k3f7", "m.0f8l9c"]]
#: Literal values of the fixture: nodes under "keep", absent under "drop".
LITERALS = ["NRN", "EIN", "DUS", "BRU", "LYS", "57.63"]


def _key(n):
    return (n.direction != "tail", n.relation, n.entity)


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> StoreKG:
    out = tmp_path_factory.mktemp("parity") / "store"
    build_store([Source(FREEBASE_NT, literals="drop")], out)
    return StoreKG(out)


@pytest.fixture(scope="module")
def entity_ids(store: StoreKG) -> list[str]:
    return sorted(store.index.keys.many(list(range(store.manifest.counts["entities"]))))


@pytest.fixture(params=BACKENDS, ids=lambda b: f"{b[0]}-p{b[1]}-b{b[2]}")
def sparql(request):
    server_name, page, batch = request.param
    server = request.getfixturevalue(server_name)
    return lambda **kw: SparqlKG(
        server.url, dialect="freebase", page_size=page, batch_size=batch, **kw
    )


async def test_names(store, entity_ids, sparql):
    ids = [*entity_ids, "m.0nothere"]
    async with sparql() as kg:
        got = await kg.names(ids)
    want = await store.names(ids)
    assert got == want
    assert want["m.03vp2t"] == "Weeze Airport" and "m.0nothere" not in want
    assert "Unnamed Entity" in want.values()  # the adjoins CVTs


async def test_neighbors_both_directions(store, entity_ids, sparql):
    async with sparql() as kg:
        got = await kg.neighbors(entity_ids)
        limited = await kg.neighbors(entity_ids, limit_per_entity=2)
    want = await store.neighbors(entity_ids)
    want_limited = await store.neighbors(entity_ids, limit_per_entity=2)
    for i in entity_ids:
        assert got[i] == sorted(want[i], key=_key), i
        assert len(limited[i]) == len(want_limited[i]), i
    weeze = {(n.direction, n.relation, n.entity) for n in want["m.03vp2t"]}
    assert ("tail", "aviation.airport.serves", "m.0d2hgq") in weeze
    assert ("head", "location.location.nearby_airports", "m.0d2hgq") in weeze
    assert not any(n.entity in LITERALS for v in want.values() for n in v)


@pytest.mark.parametrize("depth", [1, 2, 3])
async def test_expand(store, sparql, depth):
    async with sparql() as kg:
        for seeds in SEEDS:
            full = await kg.expand(seeds, depth, max_triples=10_000)
            ref = await store.expand(seeds, depth, max_triples=10_000)
            assert (full.triples, full.truncated, full.seeds) == (
                ref.triples,
                ref.truncated,
                ref.seeds,
            )
            for cap in (5, 12, len(ref.triples)):
                b = await kg.expand(seeds, depth, max_triples=cap)
                rb = await store.expand(seeds, depth, max_triples=cap)
                assert (b.truncated, b.truncation_reason, len(b.triples)) == (
                    rb.truncated,
                    rb.truncation_reason,
                    len(rb.triples),
                ), (seeds, cap)
                assert set(b.triples) <= set(full.triples)
    two_hop = await store.expand(["m.0d2hgq", "m.0f4kq"], 2, max_triples=10_000)
    assert len(two_hop.triples) == 72  # 76 when literal objects were nodes


async def test_search(store, entity_ids, sparql):
    names = await store.names(entity_ids)
    shown = sorted({n for e, n in names.items() if n not in ("Unnamed Entity", e)})
    texts = [
        *shown,
        *(n.lower() for n in shown),
        *(n.upper() + "  " for n in shown),
        "Dusseldorf",
        "düsseldorf airport",
        "Nimwegen",
        "Weeze airprt",
        "Lyon Saint-Exupery",
        "airport",
        "Brussel",
        "NRN",
        "xyzzy",
        "",
    ]
    async with sparql() as kg:
        for text in texts:
            got = await kg.search(text, limit=6, fuzzy=False)
            assert got == await store.search(text, limit=6, fuzzy=False), text
            got = await kg.search(text, limit=6, fuzzy=True)
            want = [m for m in await store.search(text, limit=50) if m.name != m.id][:6]
            assert got == want, text
        # the documented difference: nameless nodes are found by ID in the store only
        assert [m.id for m in await store.search("location.country", fuzzy=False)] == [
            "location.country"
        ]
        assert await kg.search("location.country", fuzzy=False) == []


async def test_contains(store, entity_ids, sparql):
    raw = StoreKG(store.path, noise_prefixes=())
    nb = await raw.neighbors(entity_ids)
    real = sorted({n.triple(e) for e, ns in nb.items() for n in ns})
    assert any(t.relation.startswith("type.object.") for t in real)  # noise is contained
    rels = sorted({t.relation for t in real})
    probe = [
        *real,
        *(Triple(t.tail, t.relation, t.head) for t in real),
        *(Triple(t.head, rels[(rels.index(t.relation) + 1) % len(rels)], t.tail) for t in real),
    ]
    async with sparql() as kg:
        got = await kg.contains(probe)
    assert got == await store.contains(probe)
    assert got[: len(real)] == [True] * len(real) and not all(got)


async def test_keep_policy_is_store_only(tmp_path, virtuoso):
    """Under "keep" the store has literal neighbours (which SparqlKG cannot give, so it
    refuses the policy); the store then differs from the endpoint exactly by them."""
    build_store([Source(FREEBASE_NT, literals="keep")], tmp_path / "keep")
    keep = StoreKG(tmp_path / "keep")
    with pytest.raises(KGError, match="literal policy 'keep' is not supported"):
        SparqlKG(virtuoso.url, literals="keep")
    async with SparqlKG(virtuoso.url) as kg:
        got = await kg.neighbors(["m.03vp2t", "m.0d2hgq"])
    kept = await keep.neighbors(["m.03vp2t", "m.0d2hgq"])
    extra = {(e, n.relation, n.entity) for e in kept for n in kept[e] if n not in set(got[e])}
    assert extra == {
        ("m.03vp2t", "aviation.airport.iata", "NRN"),
        ("m.0d2hgq", "location.location.area", "57.63"),
    }
    two_hop = await keep.expand(["m.0d2hgq", "m.0f4kq"], 2, max_triples=10_000)
    assert len(two_hop.triples) == 76
