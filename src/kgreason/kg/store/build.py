"""Building a store from loader sources, atomically.

Everything is written into a sibling `DIR.tmp-xxxx` directory and renamed into place only
after the manifest (written last) is complete, so an interrupted or failed build never
leaves a directory that opens as a store. The whole build holds a lock beside the target
(a second concurrent build is refused) and re-checks the target just before the swap; what a
killed build left behind is recovered first (see `swap.py`). Store directories are 0755.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import tempfile
import uuid
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from kgreason.kg.base import KGError
from kgreason.kg.inverses import detect_inverses
from kgreason.kg.loaders import Source, resolve_names
from kgreason.kg.loaders.memory_source import TripleSource
from kgreason.kg.store.build_index import csr, key_ranks, write_name_indexes
from kgreason.kg.store.format import (
    FORMAT_VERSION,
    MANIFEST,
    RELATIONS,
    Manifest,
    fingerprint_files,
    save_array,
    write_strings,
)
from kgreason.kg.store.swap import BuildLock, recover, write_error

Progress = Callable[[int, int], None]

#: The files whose bytes define the store's content (fingerprint).
CONTENT_FILES = (
    "fwd.indptr.npy",
    "fwd.rel.npy",
    "fwd.dst.npy",
    "keys.blob.npy",
    "keys.off.npy",
    RELATIONS,
    "unnamed.npy",
)


class StoreExistsError(KGError):
    """The output directory already exists (use force) or is not a store."""


class EmptyInputError(KGError):
    """An input file holds no triples: building from it is almost surely a mistake."""


def check_target(out: Path, force: bool) -> None:
    """Refuse a target build_store would refuse (callers with a long job first check)."""
    if not out.exists():
        return
    if not out.is_dir():
        raise StoreExistsError(f"{out}: exists and is not a directory")
    if (out / MANIFEST).exists():
        if not force:
            raise StoreExistsError(f"{out}: a store already exists there (use --force)")
    elif any(out.iterdir()):
        raise StoreExistsError(f"{out}: not empty and not a kgreason store; refusing to replace")


def _swap_in(tmp: Path, out: Path) -> None:
    if out.exists():
        old = out.with_name(f"{out.name}.old-{uuid.uuid4().hex[:8]}")
        out.rename(old)
        tmp.rename(out)
        shutil.rmtree(old, ignore_errors=True)
    else:
        tmp.rename(out)


def build_store(
    sources: Sequence[Source | TripleSource],
    out: Path,
    *,
    force: bool = False,
    progress: Progress | None = None,
) -> Manifest:
    """Build a store at `out` from the sources; returns its manifest."""
    out = Path(out)
    check_target(out, force)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise write_error(out, e) from None
    with BuildLock(out):
        recover(out)
        check_target(out, force)
        tmp: Path | None = None
        try:
            tmp = Path(tempfile.mkdtemp(prefix=f"{out.name}.tmp-", dir=out.parent))
            os.chmod(tmp, 0o755)  # mkdtemp makes 0700; a store is meant to be shared
            manifest = build_into(tmp, sources, progress)
            check_target(out, force)  # re-checked: nothing may have appeared meanwhile
            _swap_in(tmp, out)
        except OSError as e:
            if tmp is not None:
                shutil.rmtree(tmp, ignore_errors=True)
            raise write_error(out, e) from None
        except BaseException:
            if tmp is not None:
                shutil.rmtree(tmp, ignore_errors=True)
            raise
    return manifest


def _ingest(sources: Sequence[Source | TripleSource], progress: Progress | None) -> _Ingested:
    """Intern node and relation strings. `setdefault` with a running counter keeps the
    whole batch in C; ids are therefore sparse (one counter value per occurrence) and are
    compacted to 0..N-1, in order of first appearance, by `_compact`."""
    ing = _Ingested()
    total = sum(s.size for s in sources) or 1
    done = 0
    for s in sources:
        before = len(ing.hs)
        for heads, rels, tails in s.batches():
            keys: list[Any] = [None] * (2 * len(heads))
            keys[0::2], keys[1::2] = heads, tails
            ids = list(map(ing.nodes.setdefault, keys, ing.node_count))
            ing.hs.extend(ids[0::2])
            ing.ts.extend(ids[1::2])
            ing.rs.extend(map(ing.rels.setdefault, rels, ing.rel_count))
            if progress is not None:
                progress(done + s.bytes_read, total)
        ing.per_source.append(len(ing.hs) - before)
        done += s.size
    return ing


@dataclass
class _Ingested:
    nodes: dict[str, int] = field(default_factory=dict)
    rels: dict[str, int] = field(default_factory=dict)
    node_count: itertools.count = field(default_factory=itertools.count)
    rel_count: itertools.count = field(default_factory=itertools.count)
    hs: array = field(default_factory=lambda: array("q"))
    rs: array = field(default_factory=lambda: array("q"))
    ts: array = field(default_factory=lambda: array("q"))
    #: triples read from each source
    per_source: list[int] = field(default_factory=list)


def _compact(table: dict[str, int], count: itertools.count, *arrays: array) -> list[np.ndarray]:
    remap = np.zeros(next(count), dtype=np.int64)
    remap[np.fromiter(table.values(), np.int64, len(table))] = np.arange(len(table))
    return [
        remap[np.frombuffer(a, dtype=np.int64)] if len(a) else np.zeros(0, np.int64) for a in arrays
    ]


def _key_order(
    keys: list[str], h: np.ndarray, t: np.ndarray
) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """Nodes renumbered in key (code-point string) order, and their `keys.rank`: the
    identity (the keys are sorted once, here).

    Why: PoG's graph stages number a question subgraph's nodes in key order (the order its
    sets and texts are shown in). With node ids in that order, the clustering loop marks
    the ends by id in a bitmap that stays in cache, instead of reading a store-sized
    key-rank table at random for every row (kernels/build._cluster_ordered: 1.6x faster at
    10M triples). Stores built before keep first-appearance ids and the key-rank path."""
    rank = key_ranks(keys)
    order = np.empty(len(keys), dtype=np.int64)
    order[rank] = np.arange(len(keys))
    ordered = [keys[i] for i in order.tolist()]
    identity = np.arange(len(keys), dtype=rank.dtype)
    return ordered, rank[h].astype(np.int64), rank[t].astype(np.int64), identity


def _dedupe(h: np.ndarray, r: np.ndarray, t: np.ndarray, n: int, m: int) -> np.ndarray:
    """Indices of the first occurrence of each distinct triple, in file order."""
    if len(h) == 0:
        return np.zeros(0, dtype=np.int64)
    if n * n * max(m, 1) < 2**62:
        _, first = np.unique((h * m + r) * n + t, return_index=True)
    else:
        _, first = np.unique(np.stack([h, r, t], axis=1), axis=0, return_index=True)
    first.sort()
    return first


def _refuse_empty(sources: Sequence[Source | TripleSource], counts: list[int]) -> None:
    for s, n in zip(sources, counts, strict=True):
        if n == 0 and not s.names and not s.literals_dropped:
            raise EmptyInputError(
                f"{s.path}: no triples read ({s.format} format); nothing to build"
            )


def build_into(
    directory: Path, sources: Sequence[Source | TripleSource], progress: Progress | None
) -> Manifest:
    ing = _ingest(sources, progress)
    _refuse_empty(sources, ing.per_source)
    has_names = any(s.has_names for s in sources)
    names: dict[str, str] = {}
    for s in sources:
        names.update(s.names)
    # nodes that only carry a name, or only literal facts the "drop" policy left out, are
    # still entities (a SPARQL endpoint with the same data knows them too)
    for k in itertools.chain(names, *(s.dropped for s in sources)):
        ing.nodes.setdefault(k, next(ing.node_count))
    h, t = _compact(ing.nodes, ing.node_count, ing.hs, ing.ts)
    (r,) = _compact(ing.rels, ing.rel_count, ing.rs)
    n_input = len(ing.hs)
    keys, rels = list(ing.nodes), list(ing.rels)
    del ing
    keys, h, t, key_rank = _key_order(keys, h, t)
    n, m = len(keys), len(rels)
    first = _dedupe(h, r, t, n, m)
    h, r, t = h[first], r[first], t[first]
    e = len(h)
    given = [s.inverses for s in sources if isinstance(s, TripleSource) and s.inverses is not None]
    inverse_relations = given[0] if given else detect_inverses(h, r, t, keys, rels)
    idx_t = np.int32 if max(n, m, e) < 2**31 else np.int64

    fwd_ptr, fwd_order = csr(h, n)
    save_array(directory, "fwd.indptr", fwd_ptr)
    save_array(directory, "fwd.rel", r[fwd_order].astype(idx_t))
    save_array(directory, "fwd.dst", t[fwd_order].astype(idx_t))
    pos = np.empty(e, dtype=np.int64)
    pos[fwd_order] = np.arange(e)
    rev_ptr, rev_order = csr(t, n)
    save_array(directory, "rev.indptr", rev_ptr)
    save_array(directory, "rev.rel", r[rev_order].astype(idx_t))
    save_array(directory, "rev.src", h[rev_order].astype(idx_t))
    save_array(directory, "rev.eid", pos[rev_order].astype(idx_t))
    del h, r, t, pos, fwd_order, rev_order

    resolved = resolve_names(keys, names if has_names else None)
    labels = [k if x is None else x for k, x in zip(keys, resolved, strict=True)]
    unnamed = np.fromiter((x is None for x in resolved), np.uint8, n)
    write_strings(directory, "keys", keys)
    save_array(directory, "keys.rank", key_rank)
    save_array(directory, "unnamed", unnamed)
    (directory / RELATIONS).write_text(json.dumps(list(rels), ensure_ascii=False))
    write_name_indexes(directory, keys, labels, has_names)

    out_deg = np.diff(fwd_ptr)
    in_deg = np.diff(rev_ptr)
    manifest = Manifest(
        format_version=FORMAT_VERSION,
        fingerprint=fingerprint_files(
            directory, CONTENT_FILES + (("labels.blob.npy", "labels.off.npy") if has_names else ())
        ),
        counts={
            "triples": int(e),
            "input_triples": n_input,
            "entities": n,
            "relations": m,
            "unnamed": int(unnamed.sum()),
            "isolated": int(((out_deg + in_deg) == 0).sum()),
            "literal_triples_dropped": sum(s.literals_dropped for s in sources),
        },
        sources=[d for s in sources for d in s.describe()],
        has_names=has_names,
        inverse_relations=inverse_relations,
    )
    manifest.write(directory)  # last: its presence marks a complete store
    return manifest
