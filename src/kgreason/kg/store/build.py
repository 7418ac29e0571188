"""Building a store from loader sources, atomically.

Everything is written into a sibling `DIR.tmp-xxxx` directory and renamed into place only
after the manifest (written last) is complete, so an interrupted or failed build never
leaves a directory that opens as a store.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import uuid
from array import array
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from kgreason.kg.base import KGError
from kgreason.kg.loaders import Source, resolve_names
from kgreason.kg.store.build_index import csr, write_name_indexes
from kgreason.kg.store.format import (
    FORMAT_VERSION,
    MANIFEST,
    RELATIONS,
    Manifest,
    fingerprint_files,
    save_array,
    write_strings,
)

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


def _check_target(out: Path, force: bool) -> None:
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
    sources: Sequence[Source], out: Path, *, force: bool = False, progress: Progress | None = None
) -> Manifest:
    """Build a store at `out` from the sources; returns its manifest."""
    out = Path(out)
    _check_target(out, force)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f"{out.name}.tmp-", dir=out.parent))
    try:
        manifest = build_into(tmp, sources, progress)
        _swap_in(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return manifest


def _ingest(
    sources: Sequence[Source], progress: Progress | None
) -> tuple[dict[str, int], dict[str, int], array, array, array]:
    nodes: dict[str, int] = {}
    rels: dict[str, int] = {}
    hs, rs, ts = array("q"), array("q"), array("q")
    total = sum(s.size for s in sources) or 1
    done = 0
    for s in sources:
        for n, (h, r, t) in enumerate(s, 1):
            hs.append(nodes.setdefault(h, len(nodes)))
            rs.append(rels.setdefault(r, len(rels)))
            ts.append(nodes.setdefault(t, len(nodes)))
            if progress is not None and not n & 0xFFFF:
                progress(done + s.bytes_read, total)
        done += s.size
        if progress is not None:
            progress(done, total)
    return nodes, rels, hs, rs, ts


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


def build_into(directory: Path, sources: Sequence[Source], progress: Progress | None) -> Manifest:
    nodes, rels, hs, rs, ts = _ingest(sources, progress)
    has_names = any(s.has_names for s in sources)
    names: dict[str, str] = {}
    for s in sources:
        names.update(s.names)
    for k in names:  # nodes that only carry a name are still entities
        nodes.setdefault(k, len(nodes))
    keys = list(nodes)
    n, m = len(keys), len(rels)
    h, r, t = (
        np.frombuffer(a, dtype=np.int64) if len(a) else np.zeros(0, np.int64) for a in (hs, rs, ts)
    )
    first = _dedupe(h, r, t, n, m)
    h, r, t = h[first], r[first], t[first]
    e = len(h)
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
            "input_triples": len(hs),
            "entities": n,
            "relations": m,
            "unnamed": int(unnamed.sum()),
            "isolated": int(((out_deg + in_deg) == 0).sum()),
        },
        sources=[d for s in sources for d in s.describe()],
        has_names=has_names,
    )
    manifest.write(directory)  # last: its presence marks a complete store
    return manifest
