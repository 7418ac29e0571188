"""The SPARQL half of kg_bench: the same operations on pyoxigraph, as an endpoint client
would run them (batched VALUES queries; paths either client-side or as one UNION query)."""

from __future__ import annotations

import itertools
import multiprocessing as mp
import time
from pathlib import Path

import pyoxigraph as ox

NS = "http://kg.example/"
NOISE_RELS = ("type.object.type", "common.topic.notable_types")


def iri(key: str) -> str:
    return f"<{NS}{key}>"


NOISE_FILTER = " && ".join(f'!STRSTARTS(STR(?p), "{NS}{p.split(".")[0]}.")' for p in NOISE_RELS)


def sparql_neighbors(store: ox.Store, keys: list[str]) -> list[tuple[str, str, str]]:
    q = (
        "SELECT ?e ?p ?n ?d WHERE { VALUES ?e { " + " ".join(map(iri, keys)) + " } "
        '{ ?e ?p ?n BIND("tail" AS ?d) } UNION { ?n ?p ?e BIND("head" AS ?d) } '
        f"FILTER({NOISE_FILTER}) }}"
    )
    return [(s["n"].value, s["p"].value, s["d"].value) for s in store.query(q)]


def sparql_expand(store: ox.Store, seeds: list[str], depth: int, max_triples: int) -> int:
    """Level by level with VALUES batches, as an endpoint client does; stops at the bound."""
    seen: set[tuple[str, str, str]] = set()
    visited = {iri(s) for s in seeds}
    frontier = list(visited)
    for _ in range(depth):
        nxt = []
        for i in range(0, len(frontier), 500):
            q = (
                "SELECT ?s ?p ?o WHERE { VALUES ?e { " + " ".join(frontier[i : i + 500]) + " } "
                "{ ?e ?p ?o BIND(?e AS ?s) } UNION { ?s ?p ?e BIND(?e AS ?o) } "
                f"FILTER({NOISE_FILTER}) }} LIMIT {max_triples + 1}"
            )
            for sol in store.query(q):
                tr = (str(sol["s"]), str(sol["p"]), str(sol["o"]))
                if tr not in seen:
                    if len(seen) >= max_triples:
                        return len(seen)
                    seen.add(tr)
                for x in (tr[0], tr[2]):
                    if x not in visited:
                        visited.add(x)
                        nxt.append(x)
        frontier = nxt
    return len(seen)


def path_query(s: str, t: str, max_len: int, limit: int) -> str:
    branches = []
    for n in range(1, max_len + 1):
        nodes = [iri(s), *(f"?x{i}" for i in range(1, n)), iri(t)]
        for dirs in itertools.product((0, 1), repeat=n):
            pats = [
                f"{nodes[i]} ?p{i} {nodes[i + 1]} ."
                if d == 0
                else f"{nodes[i + 1]} ?p{i} {nodes[i]} ."
                for i, d in enumerate(dirs)
            ]
            mids = nodes[1:-1]
            filt = [f"{m} != {e}" for m in mids for e in (iri(s), iri(t))]
            filt += [f"{a} != {b}" for a, b in itertools.combinations(mids, 2)]
            filt += [NOISE_FILTER.replace("?p)", f"?p{i})") for i in range(n)]
            branches.append("{ " + " ".join(pats) + " FILTER(" + " && ".join(filt) + ") }")
    return "SELECT * WHERE { " + " UNION ".join(branches) + f" }} LIMIT {limit}"


def sparql_find_paths(store: ox.Store, s: str, t: str, max_len: int, max_paths: int) -> int:
    """find_paths' algorithm with every neighbour fetch a SPARQL query (a client-side
    search over an endpoint): returns the number of paths found."""

    def fetch(nodes: list[str], limit: int | None = None) -> list[tuple[str, str, str, str]]:
        q = (
            "SELECT ?e ?n ?p ?d WHERE { VALUES ?e { " + " ".join(nodes) + " } "
            '{ ?e ?p ?n BIND("t" AS ?d) } UNION { ?n ?p ?e BIND("h" AS ?d) } '
            f"FILTER({NOISE_FILTER}) }}" + (f" LIMIT {limit}" if limit else "")
        )
        return [(str(x["e"]), str(x["n"]), str(x["p"]), x["d"].value) for x in store.query(q)]

    src, dst = iri(s), iri(t)
    bound, budget = max(0, min(2, max_len - 1)), 100_000  # as find_paths' defaults
    dist, frontier = {dst: 0}, [dst]
    for d in range(1, bound + 1):
        level: dict[str, int] = {}
        rows = 0
        for i in range(0, len(frontier), 500):
            got = fetch(frontier[i : i + 500], limit=budget + 1)
            rows += len(got)
            if rows > budget:
                break
            for _, n, _, _ in got:
                if n not in dist and n not in level:
                    level[n] = d
        if rows > budget:  # like find_paths: a level too wide to scan ends the pruning map
            bound = d - 1
            break
        dist.update(level)
        frontier = list(level)
    cache: dict[str, list[tuple[str, int]]] = {}
    found = 0
    on_path = {src}

    into_target: dict[str, int] = {}
    for _, n, _, _ in fetch([dst]):
        into_target[n] = into_target.get(n, 0) + 1

    def walk(v: str, depth: int) -> bool:
        nonlocal found
        remaining = max_len - depth - 1
        if remaining == 0:  # last hop from the target's side, as find_paths does
            found = min(max_paths, found + into_target.get(v, 0))
            return found >= max_paths
        if v not in cache:
            cache[v] = [(n, dist.get(n, bound + 1)) for _, n, _, _ in fetch([v])]
        for n, lb in cache[v]:
            if lb > remaining:
                continue
            if n == dst:
                found += 1
                if found >= max_paths:
                    return True
            elif remaining > 0 and n not in on_path:
                on_path.add(n)
                stop = walk(n, depth + 1)
                on_path.discard(n)
                if stop:
                    return True
        return False

    if src != dst:
        walk(src, 0)
    return found


def _path_child(
    store_dir: str, kind: str, pairs: list, max_len: int, max_paths: int, out: mp.Queue
) -> None:
    st = ox.Store.read_only(store_dir)
    t0 = time.perf_counter()
    if kind == "union":
        n = sum(len(list(st.query(path_query(a, b, max_len, max_paths)))) for a, b in pairs)
    else:
        n = sum(sparql_find_paths(st, a, b, max_len, max_paths) for a, b in pairs)
    out.put((time.perf_counter() - t0, n))


def sparql_paths(
    store_dir: Path, kind: str, pairs: list, max_len: int, max_paths: int, timeout: float
) -> tuple[float, int] | None:
    """One group's path search in a forked process (pyoxigraph queries cannot be interrupted
    in-process); None when it exceeds the timeout."""
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_path_child, args=(str(store_dir), kind, pairs, max_len, max_paths, q))
    p.start()
    p.join(timeout)
    if p.is_alive():
        p.kill()
        p.join()
        return None
    return q.get(timeout=5)
