"""Entity-path search on integer arrays (pog/arrays/search.py) finds exactly what paths.py's
set-based search finds: same hops (sets, relations, alternative relations), same order,
same bound and reason, on a skewed synthetic KG (hubs, inverse-like parallel relations),
on small random KGs with self-loops and inverse pairs (Budget.revisit_when_empty on and
off, both level expansions, numpy and compiled) and on the bundled MetaQA KB. Self-loops
are kept by both tiers' builders when asked (keep_self_loops: prepare_graph asks when
revisits are on), with the same graph, reduction, paths and shown triples."""

from __future__ import annotations

import asyncio
import random

import numpy as np
import pytest
from tests.pog.synth_graphs import synth_graphs, two_hops_from

from kgreason.kg.base import Triple
from kgreason.pog.arrays import distinct as fastdistinct
from kgreason.pog.arrays import search as fastpaths
from kgreason.pog.arrays import steps as fastsets
from kgreason.pog.arrays.graph import ArrayClusteredGraph
from kgreason.pog.clustering import ClusteredGraph, Key
from kgreason.pog.order_free import order_free_paths
from kgreason.pog.paths import find_entity_paths
from kgreason.pog.ranker.supervision import answer_set, answer_size


def _pair(h, r, t, names, rels):
    fast = ArrayClusteredGraph.from_arrays(h, r, t, names, rels)
    slow = ClusteredGraph.from_triples(
        Triple(names[a], rels[b], names[c]) for a, b, c in zip(h, r, t, strict=True)
    )
    return fast, slow


@pytest.fixture(scope="module")
def graphs():
    fast, slow, names, deg = synth_graphs(mirror=400)
    return fast, slow, [names[i] for i in np.flatnonzero(deg > 0)]


def _same(fast, slow, ents, lo, hi, max_paths, revisit=False):
    kw = {"min_len": lo, "max_len": hi, "max_paths": max_paths, "revisit_when_empty": revisit}
    a = find_entity_paths(fast, ents, **kw)
    b = find_entity_paths(slow, ents, **kw)
    assert [p.hops for p in a.paths] == [p.hops for p in b.paths], ents
    assert (a.bound_hit, a.bound_reason, a.missing) == (b.bound_hit, b.bound_reason, b.missing)
    assert a.expansions == b.expansions
    return a


@pytest.mark.parametrize("revisit", [False, True])
def test_free_paths_match(graphs, revisit):
    fast, slow, nodes = graphs
    rng = random.Random(3)
    hubs = sorted(nodes, key=lambda v: -len(slow.neighbors_undirected(v)))[:3]
    bounded = alts = back = 0
    for start in hubs + rng.sample(nodes, 12):
        for max_paths in (7, 300):
            a = _same(fast, slow, [start], 1, 3, max_paths, revisit)
            bounded += a.bound_hit
            alts += any(h.alt_relations for p in a.paths for h in p.hops)
            back += any(start in h.dst for p in a.paths for h in p.hops)
        _same(fast, slow, [start], 3, 3, 300, revisit)  # the topic-entity window: min_len > 1
    assert bounded and alts  # both the bound and relation clustering were exercised
    assert bool(back) == revisit  # paths return to the start only with the flag


def test_segment_paths_match(graphs):
    fast, slow, nodes = graphs
    rng = random.Random(4)
    found = 0
    for _ in range(14):
        a = rng.choice(nodes)
        b = two_hops_from(slow, a, rng, nodes)
        ents = [a, b] if a != b else [a, rng.choice(nodes)]
        for max_paths in (5, 400):
            found += bool(_same(fast, slow, ents, 1, 6, max_paths).paths)
    three = [nodes[0], nodes[1], nodes[2]]
    _same(fast, slow, three, 1, 6, 200)
    assert found


def test_order_free_and_missing_entities(graphs):
    fast, slow, nodes = graphs
    for ents in ([nodes[5], nodes[9]], [nodes[5], "no_such_node"], ["no_such_node"]):
        a = order_free_paths(fast, ents, d_max=3, max_paths=300)
        b = order_free_paths(slow, ents, d_max=3, max_paths=300)
        assert [p.hops for p in a.paths] == [p.hops for p in b.paths]
        assert (a.bound_hit, a.bound_reason, a.missing) == (b.bound_hit, b.bound_reason, b.missing)


def test_bundled_metaqa_paths_match(tmp_path_factory):
    from kgreason.kg.bundled import bundled_store_path
    from kgreason.kg.store import StoreKG
    from kgreason.pog.graph import prepare_graph
    from kgreason.pog.settings import PoGSettings

    cache = tmp_path_factory.mktemp("kgreason-cache")
    kg = StoreKG(bundled_store_path({"KGREASON_CACHE_DIR": str(cache)}))
    topics = [["Kismet"], ["Tom Hanks"], ["Kismet", "Tom Hanks"], ["The Green Mile", "Tom Hanks"]]
    for ts in topics:
        prep = asyncio.run(prepare_graph(kg, ts, PoGSettings()))
        assert isinstance(prep.graph, ArrayClusteredGraph)
        slow = ClusteredGraph.from_triples(prep.graph.triples(), isolated=ts)
        for revisit in (False, True):
            kw = {"d_max": 3, "max_paths": 2000, "revisit_when_empty": revisit}
            a = order_free_paths(prep.graph, ts, **kw)
            b = order_free_paths(slow, ts, **kw)
            assert a.paths and [p.hops for p in a.paths] == [p.hops for p in b.paths], ts
            assert (a.bound_hit, a.bound_reason) == (b.bound_hit, b.bound_reason)
            ma, mb = a.materialize(a.paths[:10]), b.materialize(b.paths[:10])
            assert [p.hops for p in ma] == [p.hops for p in mb]


def _id_arrays(triples: list[Triple]):
    """(h, r, t, node names, relation names) of the triples, ids in name order."""
    names = np.array(sorted({x for t in triples for x in (t.head, t.tail)}), dtype=object)
    rels = sorted({t.relation for t in triples})
    idx, ridx = {v: i for i, v in enumerate(names)}, {r: i for i, r in enumerate(rels)}
    rows = [(idx[t.head], ridx[t.relation], idx[t.tail]) for t in triples]
    h, r, t_ = (np.array(x, dtype=np.int64) for x in zip(*rows, strict=True))
    return h, r, t_, names, rels


def loop_graphs(triples: list[Triple]) -> tuple[ClusteredGraph, ArrayClusteredGraph]:
    """Both forms of `triples` with their self-loops KEPT (the builders' keep_self_loops,
    as prepare_graph builds them when revisits are on), so the search's handling of a step
    that reaches only its own set is compared too."""
    triples = sorted(set(triples))
    h, r, t_, names, rels = _id_arrays(triples)
    slow = ClusteredGraph.from_triples(triples, keep_self_loops=True)
    fast = ArrayClusteredGraph.from_arrays(h, r, t_, names, rels, keep_self_loops=True)
    return slow, fast


def _by_hand(triples: list[Triple]) -> dict[str, dict[Key, set[str]]]:
    """The adjacency of `triples`, every edge kept: what the builders make with
    keep_self_loops."""
    adj: dict[str, dict[Key, set[str]]] = {}
    for t in triples:
        for node, key, other in (
            (t.head, (t.relation, True), t.tail),
            (t.tail, (t.relation, False), t.head),
        ):
            adj.setdefault(node, {}).setdefault(key, set()).add(other)
    return adj


def test_builders_keep_self_loops_only_when_asked():
    """ClusteredGraph.from_triples and ArrayClusteredGraph.from_arrays (build, from_codes):
    with keep_self_loops the graph a hand-built one; without, that of the triples without
    self-loops (as before the flag)."""
    rng = random.Random(5)
    for _ in range(20):
        triples = _random_family(rng)
        h, r, t_, names, rels = _id_arrays(triples)
        for keep in (True, False):
            kept = [x for x in triples if keep or x.head != x.tail]
            adj = _by_hand(kept)
            rows = sorted({(a, b, c) for a, b, c in zip(h, r, t_, strict=True) if keep or a != c})
            slow = ClusteredGraph.from_triples(triples, keep_self_loops=keep)
            fast = ArrayClusteredGraph.from_arrays(h, r, t_, names, rels, keep_self_loops=keep)
            for g in (slow, fast):
                got = {v: {k: set(ns) for k, ns in g.adj[v].items()} for v in g.entities()}
                assert {v: ks for v, ks in got.items() if ks} == adj
                assert g.triples() == set(kept) and g.triple_count() == len(set(kept))
                assert g.entities() == set(adj)
            assert list(zip(fast.h, fast.r, fast.t, strict=True)) == rows
            assert slow.clustered_edge_count() == fast.clustered_edge_count()
            loops = any(x.head == x.tail for x in triples)
            assert any(x.head == x.tail for x in fast.triples()) == (keep and loops)


def _random_family(rng: random.Random) -> list[Triple]:
    """A small random KG with self-loops, inverse pairs (parents / children, most edges
    mirrored) and leaves: steps left empty by the exclusions are common."""
    nodes = [f"e{i:02d}" for i in range(rng.randrange(4, 24))]
    rels = ["children", "genre", "nationality", "parents", "tracks"]
    out = set()
    for _ in range(rng.randrange(len(nodes), 3 * len(nodes))):
        a, b, r = rng.choice(nodes), rng.choice(nodes), rng.choice(rels)
        b = a if rng.random() < 0.15 else b
        out.add(Triple(a, r, b))
        if r == "parents" and rng.random() < 0.7:
            out.add(Triple(b, "children", a))
    return sorted(out)


@pytest.mark.parametrize("jit", ["0", "1"])
@pytest.mark.parametrize("level", ["distinct-sets", "distinct-sets-batched", "per-path"])
def test_random_graphs_with_self_loops_match(monkeypatch, jit, level):
    """Budget.revisit_when_empty on and off: the same paths, order, bounds and reasons in
    every expansion (LevelSteps, batched, _RowSteps; numpy and compiled), and the segment
    search (which the flag does not change) the same with it on as off."""
    monkeypatch.setenv("KGREASON_JIT", jit)
    monkeypatch.setattr(fastpaths, "SMALL_LEVEL_ROWS", 1 << 40 if level == "per-path" else 0)
    if level == "distinct-sets-batched":
        monkeypatch.setattr(fastdistinct, "BATCH_ROWS", 7)
        monkeypatch.setattr(fastsets, "CHUNK_PATHS", 3)
    rng = random.Random(8)
    back = loops = 0
    for _ in range(40):
        slow, fast = loop_graphs(_random_family(rng))
        loops += any(v in slow.adj[v].get(k, ()) for v in slow.adj for k in slow.adj[v])
        nodes = sorted(slow.adj)
        for start in rng.sample(nodes, min(3, len(nodes))):
            for revisit in (False, True):
                for lo, hi, max_paths in ((1, 3, 500), (1, 4, 9), (3, 3, 60), (2, 4, 3)):
                    a = _same(fast, slow, [start], lo, hi, max_paths, revisit)
                    ends = [start in p.end_entities() for p in a.paths]
                    assert revisit or not any(ends)  # off: the start is never reached
                    back += any(ends)
                    for p in a.paths[:20]:  # counted on ids as answer_set reads the names
                        assert answer_size(p, [start]) == len(answer_set(p, [start]))
        a, b = rng.sample(nodes, 2) if len(nodes) > 1 else (nodes[0], nodes[0])
        on = _same(fast, slow, [a, b], 1, 4, 50, True)
        off = find_entity_paths(fast, [a, b], min_len=1, max_len=4, max_paths=50)
        assert [p.hops for p in on.paths] == [p.hops for p in off.paths]
    assert back and loops


def _store(d, triples: list[Triple]):
    from kgreason.kg.loaders import Source
    from kgreason.kg.store import StoreKG, build_store

    d.mkdir()
    (d / "kg.tsv").write_text("".join(f"{t.head}\t{t.relation}\t{t.tail}\n" for t in triples))
    build_store([Source(d / "kg.tsv")], d / "store")
    return StoreKG(d / "store")


def _prepared_pair(kg, topics: list[str], keep: bool):
    """prepare_graph's array graph of a store, and the reference graph of the same subgraph
    (prepare_graph's generic branch on the store's subgraph triples), both reduced."""
    from kgreason.kg.inverses import fold_inverse_triples, known_inverses
    from kgreason.pog.graph import prepare_graph
    from kgreason.pog.reduction import reduce_graph
    from kgreason.pog.settings import PoGSettings

    s = PoGSettings()
    prep = asyncio.run(prepare_graph(kg, topics, s, keep_self_loops=keep))
    assert isinstance(prep.clustered, ArrayClusteredGraph)
    clustered = ClusteredGraph.from_triples(
        fold_inverse_triples(list(prep.subgraph.triples), known_inverses(kg)),
        isolated=topics,
        keep_self_loops=keep,
    )
    ref = reduce_graph(clustered, topics, max_len=len(topics) * s.d_max)
    return prep, clustered, ref


def _same_graph(a: ClusteredGraph, b: ClusteredGraph) -> None:
    assert a.triples() == b.triples() and a.entities() == b.entities()
    assert a.clustered_edge_count() == b.clustered_edge_count()


@pytest.mark.parametrize("jit", ["0", "1"])
def test_prepared_graphs_with_self_loops_match(monkeypatch, tmp_path, jit):
    """prepare_graph(keep_self_loops) on a store (from_store: the compiled clustering with
    KGREASON_JIT=1 drops self-loops, so it is not used for them; the reduction) and the
    reference on the same subgraph: the same graph, reduction and paths (order, bounds,
    reasons, triples), self-loops kept with the flag and dropped without it."""
    monkeypatch.setenv("KGREASON_JIT", jit)
    rng = random.Random(9)
    loops = reduced = 0
    for i in range(12):
        triples = _random_family(rng)
        kg = _store(tmp_path / str(i), triples)
        nodes = sorted({x for t in triples for x in (t.head, t.tail)})
        for topics in ([rng.choice(nodes)], rng.sample(nodes, 2)):
            for keep in (False, True):
                prep, clustered, ref = _prepared_pair(kg, topics, keep)
                _same_graph(prep.clustered, clustered)
                _same_graph(prep.graph, ref.graph)
                got = {x for x in prep.clustered.triples() if x.head == x.tail}
                sub = {x for x in prep.subgraph.triples if x.head == x.tail}
                assert got == (sub if keep else set())  # (the store keeps them)
                loops += bool(got)
                red = prep.reduction
                assert (red.reduced, red.note, red.entities_after, red.triples_after) == (
                    ref.reduced,
                    ref.note,
                    ref.entities_after,
                    ref.triples_after,
                )
                reduced += red.reduced and bool(got)
                for revisit in (False, True):
                    kw = {"d_max": 3, "max_paths": 300, "revisit_when_empty": revisit}
                    a = order_free_paths(prep.graph, topics, **kw)
                    b = order_free_paths(ref.graph, topics, **kw)
                    assert [p.hops for p in a.paths] == [p.hops for p in b.paths], topics
                    assert (a.bound_hit, a.bound_reason) == (b.bound_hit, b.bound_reason)
                    ma, mb = a.materialize(a.paths[:30]), b.materialize(b.paths[:30])
                    assert [p.hops for p in ma] == [p.hops for p in mb]
    assert loops and reduced


@pytest.mark.parametrize("jit", ["0", "1"])
def test_reduction_peels_a_dead_end_with_a_self_loop(monkeypatch, tmp_path, jit):
    """A self-loop is no neighbour for reduction's dead-end peeling: with self-loops kept,
    the two-topic graph keeps the nodes it keeps without them (D and E hang off M; D has a
    self-loop, E only one through D), in both tiers."""
    monkeypatch.setenv("KGREASON_JIT", jit)
    rows = [("A", "r", "M"), ("M", "s", "C"), ("M", "t", "D"), ("D", "u", "D"), ("D", "v", "E")]
    rows += [("E", "w", "E"), ("M", "x", "M")]
    triples = [Triple(*x) for x in rows]
    kg = _store(tmp_path / "s", triples)
    for keep in (False, True):
        prep, _, ref = _prepared_pair(kg, ["A", "C"], keep)
        for g in (prep.graph, ref.graph):
            assert g.entities() == {"A", "M", "C"}
            assert (Triple("M", "x", "M") in g.triples()) == keep
        _same_graph(prep.graph, ref.graph)


@pytest.mark.parametrize("bounds", [(None, None), (2, 3)])
def test_shown_paths_with_self_loops_match(bounds):
    """What a result shows (pog/evidence.py) of paths over self-loops: a hop read both ways
    round a self-loop (its key and the opposite one reach the same set) shows the triple
    once, in both forms."""
    from kgreason.pog.evidence import shown_paths

    rng = random.Random(6)
    twice = 0
    for _ in range(30):
        slow, fast = loop_graphs(_random_family(rng))
        for start in rng.sample(sorted(slow.adj), min(3, len(slow.adj))):
            kw = {"min_len": 1, "max_len": 3, "max_paths": 80, "revisit_when_empty": True}
            paths = list(find_entity_paths(fast, [start], **kw).paths)
            got = shown_paths(fast, paths, *bounds).paths
            ref = shown_paths.reference(slow, paths, *bounds).paths  # type: ignore[attr-defined]
            assert got == ref, start
            for p in got:
                for h in p.hops:
                    assert len(set(h.triples)) == len(h.triples)
                    keys = h.relation_keys()
                    twice += any((r, not f) in keys for r, f in keys)
    assert twice
