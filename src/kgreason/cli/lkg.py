"""`kgreason lkg`: build a persistent Logical Knowledge Graph from documents, query it
(hybrid retrieval + logical hull, optionally solving), delete a document."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import typer

from kgreason.cli.common import JsonOption, console, emit_json, fail, settings, want_json
from kgreason.cli.embedder_option import EmbedderOption, embedder_override
from kgreason.cli.errors import CLIGroup
from kgreason.cli.lkg_common import (
    make_embedder,
    make_llm,
    maybe_llm,
    parse_options,
    show_result,
)
from kgreason.lkg.storage import DB_NAME, LKGStore, StoreError
from kgreason.llm.base import LLMError

lkg_app = typer.Typer(
    cls=CLIGroup, help="Logical Knowledge Graph: build, query, delete.", no_args_is_help=True
)


def _open(directory: Path, *, hint: bool = True) -> LKGStore:
    try:
        return LKGStore(directory, create=False)
    except StoreError as e:
        if not hint:  # `lkg build --out` naming another file: never written into
            fail(f"{e}; pass --out a new path or an LKG store")
        if _store_file(directory).exists():  # a file, but not a store
            fail(str(e))
        fail(f"{e} (build one with `kgreason lkg build DOCS... --out {directory}`)")


def _store_file(out: Path) -> Path:
    """The SQLite file `--out` names (a directory holds it as lkg.sqlite, as LKGStore has)."""
    return out / DB_NAME if out.is_dir() else out


@contextmanager
def _new_or_existing(out: Path) -> Iterator[LKGStore]:
    """The store at `out`, which must be an LKG store if the file exists; a new one is
    written beside it under a temporary name and renamed into place only when the block
    leaves it holding a document, so a failed build leaves nothing (no empty store that
    `lkg query` would read, no directories made for it). A user's file is never removed."""
    final = _store_file(out)
    if final.exists():
        with _open(final, hint=False) as store:
            yield store
        return
    made = [d for d in (final.parent, *final.parent.parents) if not d.exists()]
    tmp = final.with_name(f".{final.name}.{os.getpid()}.tmp")
    store = LKGStore(tmp)
    try:
        yield store
        keep = bool(store.documents())
    except BaseException:
        keep = False
        raise
    finally:
        store.close()
        if keep:
            tmp.replace(final)
        else:
            tmp.unlink(missing_ok=True)
            for d in made:  # innermost first; only the ones made for this store
                with suppress(OSError):
                    d.rmdir()


@lkg_app.command("build")
def build_command(
    ctx: typer.Context,
    docs: list[Path] = typer.Argument(..., help="Text files to extract from."),
    out: Path = typer.Option(..., "--out", help="Store directory (created if missing)."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Bypass the LLM response cache."),
    embedder: EmbedderOption = None,
    json_out: JsonOption = False,
) -> None:
    """Extract each document into the store, skipping documents already in it (same content).

    Those need no LLM call. A new store is only written once a document is in it, so a
    build that adds nothing (no LLM configured, every extraction failed) leaves no file.
    """
    from kgreason.lkg.construction import LKGBuilder

    s = settings(ctx, **embedder_override(embedder)).settings
    texts: list[tuple[Path, str]] = []
    for d in docs:
        try:
            texts.append((d, d.read_text(encoding="utf-8")))
        except OSError as e:
            fail(f"document {d}: {e.strerror or e}")
    final = _store_file(out)
    stored: set[str] = set()
    if final.exists():
        with _open(final, hint=False) as existing:
            stored = {t for _, t in texts if existing.has_document(t)}
    todo = [(d, t) for d, t in texts if t not in stored]
    llm = (
        make_llm(
            s,
            "`kgreason lkg build`",
            "; the LLM extracts the entities, rules and constraints",
            no_cache=no_cache,
        )
        if todo
        else None
    )
    builder = (
        LKGBuilder(llm, temperature=s.lkg.temperature, max_tokens=s.lkg.max_tokens) if llm else None
    )
    report: list[dict[str, Any]] = []
    with _new_or_existing(out) as store:
        for d, t in texts:
            if (d, t) not in todo or builder is None:
                report.append({"document": str(d), "status": "unchanged"})
                continue
            try:
                graph = asyncio.run(builder.extract(t))
            except LLMError as e:
                report.append({"document": str(d), "status": "error", "error": str(e)})
                continue
            doc_id, _ = store.add_document(t, graph, source=str(d))
            flagged = sum(bool(n.flags) for n in graph.nodes.values())
            report.append({"document": str(d), "status": "added", "doc_id": doc_id,
                           "nodes": len(graph.nodes), "edges": len(graph.edges),
                           "flagged": flagged, "rejected": graph.rejected})  # fmt: skip
        counts = store.counts()
    _print_build(ctx, json_out, final, report, counts)


def _print_build(
    ctx: typer.Context,
    json_out: bool,
    final: Path,
    report: list[dict[str, Any]],
    counts: dict[str, Any],
) -> None:
    """The per-document report and the store's counts; a failed document ends the command
    with one error line (the documents added are kept)."""
    written = final.exists()
    if want_json(ctx, json_out):
        emit_json({"store": str(final) if written else None, "documents": report,
                   "counts": counts})  # fmt: skip
    else:
        for r in report:
            extra = (
                f" ({r['nodes']} nodes, {r['edges']} edges, {r['flagged']} flagged)"
                if r["status"] == "added"
                else ""
            )
            console().print(
                f"{r['document']}: {r['status']}{extra} {r.get('error', '')}", markup=False
            )
        if written:
            console().print(f"store {final}: {counts}", markup=False)
    failed = [r for r in report if r["status"] == "error"]
    if failed:
        first = failed[0]
        left = "" if written else f"; no store written at {final}"
        fail(
            f"{len(failed)} of {len(report)} document(s) failed; {first['document']}: "
            f"{first['error']}{left}"
        )


@lkg_app.command("query")
def query_command(
    ctx: typer.Context,
    directory: Path = typer.Argument(..., help="Store directory made by `lkg build`."),
    question: str = typer.Argument(..., help="The question."),
    options: list[str] | None = typer.Option(None, "--options", help="Answer options (repeat)."),
    solve: bool = typer.Option(False, "--solve", help="Also route and solve (needs an LLM)."),
    embed: bool = typer.Option(True, "--embed/--no-embed", help="Vector anchors on/off."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Bypass the LLM response cache."),
    embedder: EmbedderOption = None,
    json_out: JsonOption = False,
) -> None:
    """Retrieve the logical hull of the premises a question needs.

    With an LLM configured, the LLM extracts the question's entities and prunes the hull;
    without one, entities are matched by name, deterministically.
    """
    from kgreason.lkg.pipeline import SymbolLKG

    s = settings(ctx, **embedder_override(embedder)).settings
    store = _open(directory)
    opts = parse_options(options)
    emb = make_embedder(s, embed)
    as_json = want_json(ctx, json_out)
    if solve:
        solve_llm = make_llm(s, "`kgreason lkg query --solve`", no_cache=no_cache)
        r = asyncio.run(SymbolLKG(solve_llm, emb, s.lkg).asolve("", question, opts, store=store))
        show_result(r, as_json)
        return
    llm = maybe_llm(s, no_cache=no_cache)
    pipe = SymbolLKG(llm, emb, s.lkg)
    sub = asyncio.run(pipe.retriever(store, llm).retrieve(question))
    if as_json:
        emit_json(sub.model_dump(mode="json"))
        return
    c = console()
    c.print(f"query entities: {sub.query_entities}", markup=False)
    c.print(
        f"anchors: {len(sub.anchors)}, hull: {len(sub.hull)}, kept: {len(sub.nodes)}", markup=False
    )
    for n in sub.nodes:
        c.print(f"[{n.kind}] {n.content()}", markup=False, soft_wrap=True)
    for e in sub.edges:
        if e.raw_text:
            c.print(f"[fact] {e.raw_text}", markup=False, soft_wrap=True)
    for note in sub.notes:
        c.print(f"note: {note}", markup=False)


@lkg_app.command("delete")
def delete_command(
    ctx: typer.Context,
    directory: Path = typer.Argument(..., help="Store directory."),
    doc_id: str = typer.Argument(..., help="Document id (content hash) shown by `lkg build`."),
    json_out: JsonOption = False,
) -> None:
    """Remove a document and the nodes and edges only it contributed."""
    store = _open(directory)
    try:
        removed = store.delete_document(doc_id)
    except StoreError as e:
        fail(str(e))
    if want_json(ctx, json_out):
        emit_json({"removed": removed, "counts": store.counts()})
    else:
        console().print(f"removed {removed['nodes']} nodes, {removed['edges']} edges", markup=False)


def register(app: typer.Typer) -> None:
    app.add_typer(lkg_app, name="lkg")
