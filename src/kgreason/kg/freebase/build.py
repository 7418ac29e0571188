"""`kgreason kg build freebase-rdf-latest.gz`: a store straight from the Freebase dump, in
memory set by a budget, resumable after a crash.

The work happens in `DIR.partial/` beside the store: run files, the checkpoint
(state.py) and, last, the assembled store, renamed into place once its manifest is
written. Rerunning the same command after a crash resumes from the last checkpoint
(`restart=True` starts over); the store it ends with is the same, byte for byte, and the
same as the one built from the cleaned triples as N-Triples (its ids, CSR arrays, names
and indexes; only the manifest's description of the source differs).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import os
import shutil
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
from numpy.typing import DTypeLike

from kgreason.kg.base import KGError
from kgreason.kg.freebase import stages
from kgreason.kg.freebase.parse import KEY, DumpParser, Parsed, line_blocks
from kgreason.kg.freebase.rules import Cleaning, rule_table
from kgreason.kg.freebase.state import STAGES, BuildState, ResumeError, input_signature
from kgreason.kg.inverses import detect_inverses
from kgreason.kg.loaders.lines import LoadError
from kgreason.kg.store import runs
from kgreason.kg.store.build import CONTENT_FILES, EmptyInputError, _swap_in, check_target
from kgreason.kg.store.build_index import write_name_indexes
from kgreason.kg.store.external import StringFile
from kgreason.kg.store.format import (
    FORMAT_VERSION,
    RELATIONS,
    Manifest,
    fingerprint_files,
    hash_bytes,
)
from kgreason.kg.store.swap import BuildLock, recover, write_error

#: (stage, done, total): progress within a stage (bytes of the dump, chunks, buckets)
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class DumpOptions:
    #: the memory budget in bytes; what sets the chunk and bucket sizes
    memory: int = 2 << 30
    cleaning: Cleaning = field(default_factory=Cleaning)
    #: bytes of the decompressed dump parsed at a time
    block: int = 1 << 23

    def describe(self) -> dict[str, object]:
        return {"memory": self.memory, "block": self.block, "cleaning": self.cleaning.describe()}


def build_freebase(
    dump: Path,
    out: Path,
    *,
    options: DumpOptions | None = None,
    force: bool = False,
    restart: bool = False,
    progress: Progress | None = None,
    say: Callable[[str], None] | None = None,
) -> Manifest:
    dump, out, options = Path(dump), Path(out), options or DumpOptions()
    if not dump.is_file():
        raise LoadError(f"{dump}: no such file")
    check_target(out, force)
    work = out.with_name(out.name + ".partial")
    tick = progress or (lambda *_: None)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with BuildLock(out):
            recover(out)
            state = _open(work, dump, options, restart, say)
            try:
                _run(dump, work, state, options, tick)
            except (LoadError, EmptyInputError):
                # the dump itself is at fault: a rerun of the same dump would fail the same
                # way, so there is nothing to resume (a crash or a full disk keeps it)
                shutil.rmtree(work, ignore_errors=True)
                raise
            check_target(out, force)
            manifest = _finish(work, dump, state, options)
            _swap_in(work / "store", out)
            shutil.rmtree(work, ignore_errors=True)
    except OSError as e:
        raise write_error(out, e) from None
    return manifest


def _open(
    work: Path, dump: Path, options: DumpOptions, restart: bool, say: Callable[[str], None] | None
) -> BuildState:
    fresh = BuildState(input=input_signature(dump), options=options.describe())
    old = None if restart else BuildState.load(work)
    if old is not None and (old.input != fresh.input or old.options != fresh.options):
        raise ResumeError(
            f"{work}: holds an unfinished build of another dump or with other options "
            f"({old.input.get('path')}, {old.options}); pass --restart to discard it"
        )
    if old is not None:
        if say:
            say(f"resuming the build in {work} at stage {old.stage} (line {old.lines:,})")
        return old
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    fresh.save(work)
    return fresh


def _run(dump: Path, work: Path, state: BuildState, options: DumpOptions, tick: Progress) -> None:
    """The stages from the checkpoint's on (state.STAGES; `finish` is the caller's)."""
    steps = {
        "parse": _parse,
        "keys": _keys,
        "map": _map,
        "fwd": _fwd,
        "rev": _rev,
        "labels": _labels,
    }
    for name in STAGES[STAGES.index(state.stage) :]:
        if name in steps:
            steps[name](dump, work, state, options, tick)


class _Hashing:
    """The raw file, hashed as it is read (the manifest's sha256, without a second pass)."""

    def __init__(self, raw: BinaryIO):
        self.raw, self.sha = raw, hashlib.sha256()

    def read(self, n: int = -1) -> bytes:
        data = self.raw.read(n)
        self.sha.update(data)
        return data

    def drain(self) -> str:
        while self.read(1 << 20):
            pass
        return self.sha.hexdigest()


def _parse(dump: Path, work: Path, state: BuildState, options: DumpOptions, tick: Progress) -> None:
    parser = DumpParser(dump, options.cleaning, state.relations)
    limit = stages.chunk_rows(options.memory)
    size = dump.stat().st_size
    with open(dump, "rb") as raw:
        reader = _Hashing(raw)
        stream: Any = gzip.GzipFile(fileobj=reader, mode="rb") if _gzipped(dump) else reader  # type: ignore[call-overload]
        skip = state.offset
        while skip:  # decompressed again (and hashed), not parsed
            got = len(stream.read(min(skip, 1 << 24)))
            if not got:
                raise ResumeError(
                    f"{dump}: ends {skip:,} bytes before where the interrupted build stopped "
                    f"reading it; rerun with --restart"
                )
            skip -= got
        pending: list[Parsed] = []
        rows, drops, last, pos = 0, Counter[str](), state.lines, state.offset
        blocks = line_blocks(
            dump, stream, block=options.block, offset=state.offset, first_line=state.lines + 1
        )
        for first, pos, text in blocks:
            p = parser.parse(text, first)
            pending.append(p)
            rows += len(p.heads) + len(p.names)
            drops.update(p.drops)
            last = first + p.lines - 1
            if rows >= limit:
                _commit(work, state, parser, pending, drops, pos, last)
                pending, rows, drops = [], 0, Counter()
            tick("parse", raw.tell(), size)
        if pending or not state.chunks:
            _commit(work, state, parser, pending, drops, pos, last)
        state.sha256 = reader.drain()
    if state.lines == 0:
        raise EmptyInputError(f"{dump}: no lines read; nothing to build")
    state.advance(work, "keys")


def _gzipped(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(2) == b"\x1f\x8b"


def _commit(
    work: Path,
    state: BuildState,
    parser: DumpParser,
    pending: list[Parsed],
    drops: Counter[str],
    offset: int,
    lines: int,
) -> None:
    state.chunks.append(stages.spill(work, len(state.chunks), pending))
    state.offset, state.lines = offset, lines
    state.relations = list(parser.relations)
    state.drops = dict(Counter(state.drops) + drops)
    state.save(work)


def _keys(dump: Path, work: Path, state: BuildState, options: DumpOptions, tick: Progress) -> None:
    n = stages.merge_keys(work, state, options.memory)
    if n == 0:
        raise EmptyInputError(f"{dump}: no entity-to-entity triple or name kept; nothing to build")
    names = sum(c["names"] for c in state.chunks)
    wanted = math.ceil(max(state.rows, names, 1) * stages.BUCKET_ROW_BYTES / options.memory)
    state.entities = n
    state.width = max(1, math.ceil(n / max(1, wanted)))
    state.buckets = math.ceil(n / state.width)
    state.advance(work, "map")


def _map(dump: Path, work: Path, state: BuildState, options: DumpOptions, tick: Progress) -> None:
    for c in range(state.done, len(state.chunks)):
        runs.restore(work, "fb-*", state.sizes)
        runs.restore(work, "nb-*", state.sizes)
        stages.map_chunk(work, state, c, options.memory)
        state.done = c + 1
        state.sizes = runs.sizes(stages.bucket_files(work, "fb") + stages.bucket_files(work, "nb"))
        state.save(work)
        tick("map", c + 1, len(state.chunks))
    for suffix in ("h", "t", "r", "v", "nk", "nr", "nl", "nv"):
        for p in work.glob(f"c*.{suffix}"):
            p.unlink()
    state.advance(work, "fwd")


def _outputs(work: Path, spec: Mapping[str, DTypeLike]) -> dict[str, runs.NpyRaw]:
    return {name: runs.NpyRaw(work / f"{name}.npy", dt) for name, dt in spec.items()}


def _per_bucket(
    work: Path,
    state: BuildState,
    stage: str,
    outputs: dict[str, runs.NpyRaw],
    scatter_to: str | None,
    step: Callable[[Path, BuildState, int, dict[str, runs.NpyRaw]], None],
    tick: Progress,
    after: str,
) -> None:
    """One bucket at a time, checkpointing the outputs' and the next buckets' sizes."""
    for b in range(state.done, state.buckets):
        for o in outputs.values():
            runs.restore(work, o.raw.name, state.sizes)
        if scatter_to:
            runs.restore(work, f"{scatter_to}-*", state.sizes)
        for o in outputs.values():
            o.start()
        step(work, state, b, outputs)
        state.done = b + 1
        files = [o.raw for o in outputs.values()]
        if scatter_to:
            files += stages.bucket_files(work, scatter_to)
        state.sizes = runs.sizes(files)
        state.save(work)
        tick(stage, b + 1, state.buckets)
    for o in outputs.values():
        o.start()  # a KG with no rows at all still gets its (empty) arrays
    state.advance(work, after)


def _fwd(dump: Path, work: Path, state: BuildState, options: DumpOptions, tick: Progress) -> None:
    idt = stages.id_dtype(state)
    spec: dict[str, DTypeLike] = {"fwd.counts": np.int64, "fwd.rel": idt, "fwd.dst": idt}
    _per_bucket(work, state, "fwd", _outputs(work, spec), "rb", stages.fwd_bucket, tick, "rev")


def _rev(dump: Path, work: Path, state: BuildState, options: DumpOptions, tick: Progress) -> None:
    idt = stages.id_dtype(state)
    spec: dict[str, DTypeLike] = {
        "rev.counts": np.int64,
        "rev.rel": idt,
        "rev.src": idt,
        "rev.eid": idt,
    }
    _per_bucket(work, state, "rev", _outputs(work, spec), None, stages.rev_bucket, tick, "labels")


def _labels(
    dump: Path, work: Path, state: BuildState, options: DumpOptions, tick: Progress
) -> None:
    spec = {"labels.len": np.int64, "labels.blob": np.uint8, "unnamed": np.uint8}
    _per_bucket(
        work,
        state,
        "labels",
        _outputs(work, spec),
        None,
        stages.label_bucket,
        tick,
        "finish",
    )


def _finish(work: Path, dump: Path, state: BuildState, options: DumpOptions) -> Manifest:
    from kgreason.kg.freebase.assemble import assemble

    store = work / "store"
    store.mkdir(exist_ok=True)
    os.chmod(store, 0o755)
    counts = assemble(work, store, state, options.memory)
    labels = _label_file(work, store)
    hashes = _key_hashes(work, state.entities)
    write_name_indexes(store, None, labels, True, key_hashes=hashes, memory=options.memory)
    del labels
    (store / RELATIONS).write_text(json.dumps(state.relations, ensure_ascii=False))
    inverses = _inverses(store, state, work, options.memory)
    manifest = Manifest(
        format_version=FORMAT_VERSION,
        fingerprint=fingerprint_files(store, (*CONTENT_FILES, "labels.blob.npy", "labels.off.npy")),
        counts={
            "triples": state.edges,
            "input_triples": state.rows,
            "entities": state.entities,
            "relations": len(state.relations),
            **counts,
            "literal_triples_dropped": int(state.drops.get("literal", 0)),
            "dump_lines": state.lines,
        },
        sources=[
            {
                "path": str(dump.resolve()),
                "format": "freebase",
                "sha256": state.sha256,
                "cleaning": options.cleaning.describe(),
                "dropped": rule_table(state.drops),
            }
        ],
        has_names=True,
        inverse_relations=inverses,
    )
    manifest.write(store)  # last: its presence marks a complete store
    return manifest


def _key_hashes(work: Path, n: int, block: int = 1 << 20) -> Iterator[np.ndarray]:
    """hash_many of every key, a block at a time (never all keys as str, nor all hashes)."""
    for a in range(0, n, block):
        yield hash_bytes(runs.read(work / "keys.S", KEY, a, min(block, n - a)).tolist())


def _label_file(work: Path, store: Path) -> StringFile:
    """The labels stage's output as the store's labels table, read from its files: the
    blob moved in (unless an interrupted finish already did), the offsets written from
    the lengths a block at a time."""
    blob = runs.NpyRaw(work / "labels.blob.npy", np.uint8)
    if blob.raw.exists():
        blob.finish(store)
    lens = work / "labels.len.npy.raw"
    off = runs.NpyRaw(work / "labels.off.npy", np.int64)
    off.raw.unlink(missing_ok=True)
    off.start()
    off.append(np.zeros(1, np.int64))
    total, n, block = 0, runs.items(lens, np.int64, header=runs.HEADER), 1 << 20
    for a in range(0, n, block):
        part = runs.read(lens, np.int64, runs.HEADER // 8 + a, min(block, n - a))
        off.append(total + np.cumsum(part))
        total += int(part.sum())
    off.finish(store)
    return StringFile(store, "labels")


def _inverses(store: Path, state: BuildState, work: Path, memory: int) -> list[dict[str, object]]:
    """`detect_inverses` needs every edge in memory: run only when they fit the budget."""
    if state.edges * 8 * 8 > memory:
        return []
    keys = [k.decode() for k in runs.read(work / "keys.S", KEY).tolist()]
    ptr = np.load(store / "fwd.indptr.npy")
    h = np.repeat(np.arange(state.entities, dtype=np.int64), np.diff(ptr))
    r = np.load(store / "fwd.rel.npy").astype(np.int64)
    t = np.load(store / "fwd.dst.npy").astype(np.int64)
    return detect_inverses(h, r, t, keys, state.relations)


__all__ = ["DumpOptions", "KGError", "build_freebase"]
