"""Prefix search (`search(..., prefix=True)`, what the explorer's search box sends while the
user types): a name the text starts (normalised) ranks after exact and normalised matches
and before fuzzy ones, shortest name first. MemoryKG and every StoreKG path agree: the
sorted-name index of new stores, the order computed for small older stores, and the
trigram fallback of large older stores. Without `prefix` nothing changes (PoG's linker)."""

from __future__ import annotations

import pytest

from kgreason.kg.loaders import Source
from kgreason.kg.memory import MemoryKG
from kgreason.kg.store import StoreKG, build_store
from kgreason.kg.store import names as names_mod

NAMES = [
    "Once Were Warriors",
    "Once",
    "One Week",
    "Schindler's List",
    "Shiner",
    "Star Wars",
    "Star Wars Episode I",
    "Star Trek",
    "star wars",  # the same normalised name as "Star Wars"
    "Star Warz Parody",
    "Stardust",
    "Starman",
    "Once Upon a Time",
]
#: TSV stores name entities by their ids (as MetaQA does): the names are the ids here
TRIPLES = [(name, "r", "hub") for name in NAMES]
QUERIES = ["Once W", "once", "Once Were Warr", "Schindler", "Star", "star wa", "STAR WARS",
           "Sta", "St", "S", "Zzz", "Once Upon a Time in"]  # fmt: skip


@pytest.fixture(scope="module")
def kgs(tmp_path_factory):
    d = tmp_path_factory.mktemp("prefix")
    src = d / "kg.tsv"
    src.write_text("".join(f"{h}\t{r}\t{t}\n" for h, r, t in TRIPLES))
    out = d / "store"
    build_store([Source(src)], out)
    return MemoryKG(TRIPLES), out


def kinds(ms):
    return [(m.name, m.kind) for m in ms]


async def test_prefix_ranks_after_exact_and_normalised_before_fuzzy(kgs):
    mem, _ = kgs
    got = await mem.search("Once W", limit=5, prefix=True)
    assert kinds(got)[0] == ("Once Were Warriors", "prefix")
    assert got[0].score == round(len("once w") / len("once were warriors"), 4)
    assert {m.kind for m in got[1:]} <= {"fuzzy"}
    got = await mem.search("once", limit=6, prefix=True)
    assert kinds(got)[:3] == [("Once", "normalized"), ("Once Upon a Time", "prefix"),
                              ("Once Were Warriors", "prefix")]  # fmt: skip
    got = await mem.search("Schindler", limit=3, prefix=True)
    assert kinds(got)[0] == ("Schindler's List", "prefix")  # before the fuzzy "Shiner"
    # shortest first, then by normalised name, then by id; never the text's own group
    got = await mem.search("Star Wars", limit=10, prefix=True)
    assert kinds(got)[:3] == [("Star Wars", "exact"), ("star wars", "normalized"),
                              ("Star Wars Episode I", "prefix")]  # fmt: skip
    assert {m.kind for m in got[3:]} == {"fuzzy"}
    got = await mem.search("Sta", limit=10, prefix=True, fuzzy=False)
    assert [m.name for m in got] == [
        "Starman",
        "Stardust",
        "Star Trek",
        "Star Wars",
        "star wars",
        "Star Warz Parody",
        "Star Wars Episode I",
    ]
    assert all(m.kind == "prefix" for m in got)


async def test_without_prefix_nothing_changes(kgs):
    mem, out = kgs
    for kg in (mem, StoreKG(out)):
        for q in QUERIES:
            for fuzzy in (True, False):
                got = await kg.search(q, limit=10, fuzzy=fuzzy)
                assert all(m.kind != "prefix" for m in got), q
        assert await kg.search("Once W", limit=5, fuzzy=False) == []  # PoG's exact-first link


async def test_limit_holds_and_prefix_fills_before_fuzzy(kgs):
    mem, _ = kgs
    got = await mem.search("S", limit=3, prefix=True)
    assert len(got) == 3 and all(m.kind == "prefix" for m in got)
    assert [m.name for m in got] == ["Shiner", "Starman", "Stardust"]


@pytest.mark.parametrize("path", ["sorted-index", "computed-order", "trigram-fallback"])
async def test_store_paths_agree_with_memory(kgs, path, monkeypatch, tmp_path):
    mem, out = kgs
    store_dir = out
    if path != "sorted-index":  # a store built before the sorted-name index existed
        import shutil

        store_dir = tmp_path / "old"
        shutil.copytree(out, store_dir)
        (store_dir / "norms.order.npy").unlink()
    if path == "trigram-fallback":
        monkeypatch.setattr(names_mod, "EXHAUSTIVE_FUZZY", 0)
    store = StoreKG(store_dir)
    for q in QUERIES:
        if path == "trigram-fallback" and len(q.strip()) < 2:
            continue  # one letter has no trigram: documented, checked below
        for fuzzy in (True, False):
            want = await mem.search(q, limit=8, prefix=True, fuzzy=fuzzy)
            got = await store.search(q, limit=8, prefix=True, fuzzy=fuzzy)
            if path == "trigram-fallback" and fuzzy:
                # large older stores score fuzzy matches among trigram candidates only
                got = [m for m in got if m.kind != "fuzzy"]
                want = [m for m in want if m.kind != "fuzzy"]
            assert got == want, (q, fuzzy)
    if path == "trigram-fallback":
        assert [m.kind for m in await store.search("S", limit=5, prefix=True, fuzzy=False)] == []


WORDS = ["Star", "star", "Stark", "Once", "Ónce", "O'Neil", "type", "Type_1", "typo"]


@pytest.fixture(scope="module")
def many(tmp_path_factory):
    """3,000 names with heavy prefix ties (same lengths, case and accent variants)."""
    import random

    rnd = random.Random(7)
    names = sorted({f"{rnd.choice(WORDS)} {rnd.randrange(10**rnd.randint(1, 4))}"
                    for _ in range(3000)})  # fmt: skip
    triples = [(n, "r", "hub") for n in names]
    d = tmp_path_factory.mktemp("many")
    (d / "kg.tsv").write_text("".join(f"{h}\t{r}\t{t}\n" for h, r, t in triples))
    build_store([Source(d / "kg.tsv")], d / "store")
    return MemoryKG(triples), d / "store"


MANY_QUERIES = ["st", "Star", "star 1", "once", "ONCE 4", "o'ne", "oneil 9", "type", "Type 1",
                "type 1 ", "typo 99", "s", "t", "Stark 12"]  # fmt: skip


@pytest.mark.parametrize("limit", [1, 3, 10, 40])
async def test_many_ties_store_matches_memory(many, limit, monkeypatch, tmp_path):
    import shutil

    mem, out = many
    old = tmp_path / "old"
    shutil.copytree(out, old)
    (old / "norms.order.npy").unlink()
    sorted_store = StoreKG(out)
    found = 0
    for q in MANY_QUERIES:
        want = await mem.search(q, limit=limit, prefix=True, fuzzy=False)
        wide = await mem.search(q, limit=40, prefix=True, fuzzy=False)
        found += any(m.kind == "prefix" for m in wide)
        assert await sorted_store.search(q, limit=limit, prefix=True, fuzzy=False) == want, q
    assert found >= len(MANY_QUERIES) - 3  # the queries do exercise the prefix tier
    monkeypatch.setattr(names_mod, "EXHAUSTIVE_FUZZY", 0)  # the trigram fallback
    fallback = StoreKG(old)
    for q in MANY_QUERIES:
        if len(q.strip()) < 2:
            continue
        want = await mem.search(q, limit=limit, prefix=True, fuzzy=False)
        assert await fallback.search(q, limit=limit, prefix=True, fuzzy=False) == want, q


async def test_trigram_fallback_is_bounded_and_still_right(many, monkeypatch, tmp_path):
    """With few candidates checked, the answer may be short, never wrong: every hit starts
    with the text, shortest first, at most `limit`."""
    import shutil

    from kgreason.kg.ranking import normalize_name
    from kgreason.kg.store import prefix as prefix_mod

    _, out = many
    old = tmp_path / "old"
    shutil.copytree(out, old)
    (old / "norms.order.npy").unlink()
    monkeypatch.setattr(names_mod, "EXHAUSTIVE_FUZZY", 0)
    monkeypatch.setattr(prefix_mod, "PREFIX_VERIFY", 5)
    store = StoreKG(old)
    for q in MANY_QUERIES:
        got = [m for m in await store.search(q, limit=8, prefix=True, fuzzy=False)
               if m.kind == "prefix"]  # fmt: skip
        norms = [normalize_name(m.name) for m in got]
        assert len(got) <= 8 and all(n.startswith(normalize_name(q)) for n in norms), q
        assert [len(n) for n in norms] == sorted(len(n) for n in norms), q
