"""find_paths against a brute-force enumeration of simple paths on a small skewed graph."""

from __future__ import annotations

import random

import pytest

from kgreason.kg.loaders import Source
from kgreason.kg.store import StoreKG, build_store
from kgreason.kg.store.paths import find_paths


def _brute(adj, s, t, max_len):
    out = []

    def walk(v, path_nodes, path):
        for n, key in adj.get(v, []):
            if n == t:
                out.append([*path, key])
            elif len(path) + 1 < max_len and n not in path_nodes:
                walk(n, path_nodes | {n}, [*path, key])

    walk(s, {s}, [])
    return sorted(map(tuple, out))


@pytest.fixture(scope="module")
def kg(tmp_path_factory):
    d = tmp_path_factory.mktemp("paths")
    rng = random.Random(3)
    lines = {
        f"n{min(rng.randrange(60), rng.randrange(60))}\t{rng.choice('abc')}\tn{rng.randrange(60)}"
        for _ in range(220)
    }
    lines |= {"n1\tcommon.noise\tn2", "n5\tb\tn5"}
    (d / "g.tsv").write_text("\n".join(sorted(lines)) + "\n")
    build_store([Source(d / "g.tsv")], d / "s")
    return StoreKG(d / "s")


@pytest.mark.parametrize("max_len", [1, 2, 3, 4])
def test_all_simple_paths(kg, max_len):
    adj: dict[int, list] = {}
    triples = kg.triples_of(list(range(kg.graph.n_edges)))
    ids = dict(
        zip([t.head for t in triples], kg.node_ids([t.head for t in triples]).tolist(), strict=True)
    )
    ids |= dict(
        zip([t.tail for t in triples], kg.node_ids([t.tail for t in triples]).tolist(), strict=True)
    )
    for eid, t in enumerate(triples):
        if t.relation.startswith("common."):
            continue
        adj.setdefault(ids[t.head], []).append((ids[t.tail], eid))
        adj.setdefault(ids[t.tail], []).append((ids[t.head], eid))
    s, t = kg.node_ids(["n1", "n2"]).tolist()
    want = _brute(adj, s, t, max_len)
    got = find_paths(kg.graph, s, t, max_len, max_paths=10**6)
    assert not got.truncated
    assert sorted(map(tuple, got.paths)) == want
    if max_len >= 3:
        assert len(want) > 10
        capped = find_paths(kg.graph, s, t, max_len, max_paths=5)
        assert (
            capped.truncated and capped.reason == "max_paths=5 reached" and len(capped.paths) == 5
        )
        assert set(map(tuple, capped.paths)) <= set(want)
