"""`kgreason lkg`: build a persistent Logical Knowledge Graph from documents, query it
(hybrid retrieval + logical hull, optionally solving), delete a document."""

from __future__ import annotations

import asyncio
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
from kgreason.lkg.storage import LKGStore, StoreError
from kgreason.llm.base import LLMError

lkg_app = typer.Typer(
    cls=CLIGroup, help="Logical Knowledge Graph: build, query, delete.", no_args_is_help=True
)


def _open(directory: Path) -> LKGStore:
    try:
        return LKGStore(directory, create=False)
    except StoreError as e:
        fail(f"{e} (build one with `kgreason lkg build DOCS... --out {directory}`)")


@lkg_app.command("build")
def build_command(
    ctx: typer.Context,
    docs: list[Path] = typer.Argument(..., help="Text files to extract from."),
    out: Path = typer.Option(..., "--out", help="Store directory (created if missing)."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Bypass the LLM response cache."),
    embedder: EmbedderOption = None,
    json_out: JsonOption = False,
) -> None:
    """Extract each document into the store; documents already stored (same content) are
    skipped without an LLM call."""
    from kgreason.lkg.construction import LKGBuilder

    s = settings(ctx, **embedder_override(embedder)).settings
    texts: list[tuple[Path, str]] = []
    for d in docs:
        try:
            texts.append((d, d.read_text(encoding="utf-8")))
        except OSError as e:
            fail(f"document {d}: {e.strerror or e}")
    store = LKGStore(out)
    todo = [(d, t) for d, t in texts if not store.has_document(t)]
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
                       "nodes": len(graph.nodes), "edges": len(graph.edges), "flagged": flagged,
                       "rejected": graph.rejected})  # fmt: skip
    counts = store.counts()
    if want_json(ctx, json_out):
        emit_json({"store": str(store.path), "documents": report, "counts": counts})
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
        console().print(f"store {store.path}: {counts}", markup=False)
    failed = [r for r in report if r["status"] == "error"]
    if failed:
        first = failed[0]
        fail(
            f"{len(failed)} of {len(report)} document(s) failed; {first['document']}: {first['error']}"
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
    """Retrieve the logical hull for a question (LLM entity extraction and pruning when an
    LLM is configured, deterministic name matching otherwise)."""
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
