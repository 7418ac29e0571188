"""render.shown_names on a store's array graph (names read by node id) equals what the
reference does (kg.names of displayed_ids), on a KG whose display names are not its keys,
with unnamed nodes among them; other forms return None (the caller looks the keys up)."""

from __future__ import annotations

import asyncio
from itertools import pairwise

import pytest

from kgreason.kg.base import Triple
from kgreason.kg.loaders import Source
from kgreason.kg.memory import MemoryKG
from kgreason.kg.store import StoreKG, build_store
from kgreason.kg.synthetic import synth_kg, synth_questions
from kgreason.pog.arrays.table import TablePaths
from kgreason.pog.graph import prepare_graph
from kgreason.pog.paths import find_entity_paths
from kgreason.pog.render import NameBook, displayed_ids, shown_names
from kgreason.pog.settings import PoGSettings


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    kg = synth_kg(20_000, seed=7)
    d = tmp_path_factory.mktemp("named")
    kg.write_tsv(d / "kg.tsv")
    rows = [ln.split("\t") for ln in (d / "kg.tsv").read_text().splitlines()]
    keys = sorted({x for h, _, t in rows for x in (h, t)})
    label = "<http://www.w3.org/2000/01/rdf-schema#label>"
    with (d / "kg.nt").open("w") as f:
        f.writelines(f"<http://x/{h}> <http://x/{r}> <http://x/{t}> .\n" for h, r, t in rows)
        # one in three nodes named (the others show their key)
        f.writelines(f'<http://x/{k}> {label} "Name of {k.upper()}" .\n' for k in keys[::3])
    build_store([Source(d / "kg.nt")], d / "store")
    qs = synth_questions(kg, 8, 0, seed=7, hub_share=0.5)
    return StoreKG(d / "store"), [[f"http://x/{q.topics[0]}"] for q in qs]


def test_names_by_node_id_are_the_kgs_names(store):
    kg, qs = store
    checked = 0
    for q in qs:
        g = asyncio.run(prepare_graph(kg, q, PoGSettings())).graph
        res = find_entity_paths(g, q, min_len=1, max_len=3, max_paths=2000)
        if not isinstance(res.paths, TablePaths) or not len(res.paths):
            continue
        for cap in (1, 4, 8, None):
            got = shown_names(g, res.paths, cap)
            ids = displayed_ids(res.paths, cap)
            assert got is not None and set(got) == ids
            assert got == asyncio.run(kg.names(sorted(ids)))
        checked += 1
    assert checked >= 4
    assert any(v.startswith("Name of") for v in got.values())  # display names, not keys


def test_two_topic_paths_read_their_names_by_node_id(store, tmp_path):
    """A two-topic search's paths are a list of ReasoningPaths over the graph's NameSets:
    their names come by node id too, equal to the lookup."""
    from kgreason.pog.order_free import order_free_paths

    kg, qs = store
    checked = 0
    for a, b in pairwise(qs):
        topics = [a[0], b[0]]
        prep = asyncio.run(prepare_graph(kg, topics, PoGSettings()))
        res = order_free_paths(prep.graph, list(prep.topics), d_max=4, max_paths=500)
        if not res.paths or isinstance(res.paths, TablePaths):
            continue
        got = shown_names(prep.graph, res.paths, 8)
        ids = displayed_ids(res.paths, 8)
        assert got is not None and set(got) == ids
        assert got == asyncio.run(kg.names(sorted(ids)))
        checked += 1
    assert checked >= 1


def test_name_book_from_paths_equals_the_lookup(store):
    kg, qs = store
    g = asyncio.run(prepare_graph(kg, qs[0], PoGSettings())).graph
    res = find_entity_paths(g, qs[0], min_len=1, max_len=3, max_paths=2000)
    a, b = NameBook(kg), NameBook(kg)
    asyncio.run(a.ensure_shown(g, res.paths))
    asyncio.run(b.ensure(displayed_ids(res.paths)))
    assert a.names == b.names and a.names


def test_other_forms_look_names_up():
    kg = MemoryKG([Triple("a", "r", "b"), Triple("b", "r", "c")])
    g = asyncio.run(prepare_graph(kg, ["a"], PoGSettings())).graph
    res = find_entity_paths(g, ["a"], min_len=1, max_len=2, max_paths=100)
    assert shown_names(g, res.paths, 8) is None
