"""Search on large stores scores only trigram candidates; on real names it must still find
what the exhaustive scan (MemoryKG's answer) finds for typical typos."""

from __future__ import annotations

import pytest

from kgreason.kg.loaders import Source, load_all
from kgreason.kg.memory import MemoryKG
from kgreason.kg.store import StoreKG, build_store
from kgreason.kg.store import names as names_mod


@pytest.fixture(scope="module")
def pq(shared_data, tmp_path_factory):
    src = shared_data / "kgqa/pathquestion/PathQuestion/PQL3-KB.txt"
    out = tmp_path_factory.mktemp("pql3") / "s"
    build_store([Source(src)], out)
    triples, names = load_all([Source(src)])
    return StoreKG(out), MemoryKG(triples, names)


QUERIES = [
    "Mark Metcalfe",
    "edvin laine",
    "Iisalmi",
    "Beth Cordingley",
    "Lviv University",
    "Englnd",
]


async def test_trigram_candidates_find_the_best_match(pq, monkeypatch):
    store, mem = pq
    monkeypatch.setattr(names_mod, "EXHAUSTIVE_FUZZY", 0)  # force the large-store path
    for q in QUERIES:
        want = await mem.search(q, limit=3)
        got = await store.search(q, limit=3)
        assert want and got[0] == want[0], q
        assert all(g.score >= 0.6 for g in got)


async def test_exhaustive_path_matches_memory(pq):
    store, mem = pq
    for q in QUERIES:
        assert await store.search(q, limit=5) == await mem.search(q, limit=5)
