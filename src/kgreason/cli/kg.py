"""`kgreason kg build` and `kgreason kg info`: make and inspect embedded KG stores."""

from __future__ import annotations

import time
from pathlib import Path

import typer
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from kgreason.cli import common
from kgreason.cli.common import console, emit_json, err_console, fail, settings, want_json
from kgreason.cli.errors import CLIGroup

FORMAT_HELP = (
    "auto|tsv|metaqa|pathquestion|nt|ttl|metaqa-ids|freebase (auto: by extension; a Freebase "
    "dump by its first line)"
)


def build(
    ctx: typer.Context,
    files: list[Path] = typer.Argument(..., help="Triple files (or a MetaQA id directory)."),
    out: Path = typer.Option(..., "--out", help="Store directory to create."),
    fmt: str = typer.Option("auto", "--format", help=FORMAT_HELP),
    force: bool = typer.Option(False, "--force", help="Replace an existing store."),
    literals: str | None = typer.Option(
        None,
        "--literals",
        help="RDF literal objects: drop (not edges) or keep (nodes named by their value); "
        "default: the kg.literals setting (drop).",
    ),
    warm: bool | None = typer.Option(
        None,
        "--warm/--no-warm",
        help="Compile PoG's graph kernels after the build (once per install, ~20 s) so the "
        "first question does not; default: for stores of 1M triples or more, which use them.",
    ),
    memory: str = typer.Option(
        "2G", "--memory", help="Freebase dumps: the build's memory budget (e.g. 2G, 512M)."
    ),
    lang: str = typer.Option("en", "--lang", help="Freebase dumps: the language of names kept."),
    keep: list[str] = typer.Option(
        [],
        "--keep",
        help="Freebase dumps: a relation rule to switch off (type_object, schema, common, "
        "freebase_meta); repeatable.",
    ),
    restart: bool = typer.Option(
        False,
        "--restart",
        help="Freebase dumps: discard an unfinished build instead of resuming it.",
    ),
    json_out: common.JsonOption = False,
) -> None:
    """Build a persistent store from triple files, or from the Freebase dump
    (freebase-rdf-latest.gz) in bounded memory, resuming an interrupted build."""
    from kgreason.kg.base import KGError
    from kgreason.kg.freebase.parse import looks_like_dump
    from kgreason.kg.loaders import Source
    from kgreason.kg.store import build_store

    if fmt == "freebase" or (fmt == "auto" and len(files) == 1 and looks_like_dump(files[0])):
        from kgreason.cli.kg_freebase import build_dump

        if len(files) != 1:
            fail("a Freebase dump build reads exactly one file")
        if literals == "keep":
            fail("--literals keep is not available for Freebase dumps: literals are dropped")
        triples = build_dump(
            files[0],
            out,
            memory=memory,
            lang=lang,
            keep=keep,
            force=force,
            restart=restart,
            json_out=want_json(ctx, json_out),
        )
        _warm_kernels(triples, warm)
        return
    policy = settings(ctx, **{"kg.literals": literals}).settings.kg.literals
    started = time.perf_counter()
    err = err_console()
    try:
        sources = [Source(f, fmt, literals=policy) for f in files]
        with Progress(
            TextColumn("building {task.fields[out]}"),
            BarColumn(),
            DownloadColumn(),
            TimeRemainingColumn(),
            console=err,
            transient=True,
            # off a terminal a transient bar cannot be erased: it left a blank line
            # before every error (and in logs); on one it is erased
            disable=not err.is_terminal,
        ) as bar:
            task = bar.add_task("build", total=sum(s.size for s in sources), out=out.name)
            manifest = build_store(
                sources, out, force=force, progress=lambda d, t: bar.update(task, completed=d)
            )
    except KGError as e:
        fail(str(e))
    seconds = round(time.perf_counter() - started, 2)
    triples = int(manifest.counts.get("triples", 0))
    if want_json(ctx, json_out):
        kernels = _warm_kernels(triples, warm)
        emit_json(
            {
                "store": str(out),
                "seconds": seconds,
                "literals": policy if any(s.has_names for s in sources) else None,
                "kernels": kernels,
                **manifest.counts,
            }
        )
        return
    c = manifest.counts
    lits = ""
    if any(s.has_names for s in sources):
        lits = f", literals {policy}"
        if policy == "drop":
            lits += f" ({c['literal_triples_dropped']:,} literal triples dropped)"
    console().print(
        f"built {out}: {c['triples']:,} triples ({c['input_triples'] - c['triples']:,} "
        f"duplicates dropped), {c['entities']:,} entities, {c['relations']:,} relations"
        f"{lits} in {seconds} s",
        soft_wrap=True,
    )
    console().print(
        f"LLM-free answers on it: `kgreason ask --kg {out} QUESTION` ranks its paths with "
        "the zero-shot order-aligned ranking; `kgreason train ranker --kg "
        f"{out} --out DIR` trains one without labels (experimental: it ranked below "
        "order-aligned on every KG measured, docs/ranker.md; `ask --ranker DIR` uses it)",
        soft_wrap=True,
        highlight=False,
        markup=False,
    )
    _warm_kernels(triples, warm)  # after the summary: the build is done, the compile follows


def _warm_kernels(triples: int, warm: bool | None) -> str:
    """The build's last step (kgreason.heap.warm_built_store): a large store's first
    question then loads the kernels from numba's disk cache instead of compiling them; the
    compile prints its one line on stderr. A failure here never fails the build."""
    from kgreason.heap import warm_built_store

    try:
        return warm_built_store(triples, warm)
    except Exception as e:  # the store is built; the kernels compile on first use instead
        err_console().print(
            f"kgreason: warning: compiling the graph kernels failed ({type(e).__name__}: "
            f"{e}); they compile on first use instead",
            markup=False,
            soft_wrap=True,
        )
        return "failed"


def info(
    ctx: typer.Context,
    store: Path = typer.Argument(..., help="Store directory."),
    top: int = typer.Option(10, "--top", help="Relations and hubs to list."),
    json_out: common.JsonOption = False,
) -> None:
    """Counts, relation histogram and degree figures of a store."""
    from kgreason.kg.base import KGError
    from kgreason.kg.store import StoreKG
    from kgreason.kg.store.stats import store_info

    try:
        data = store_info(StoreKG(store), top)
    except KGError as e:
        fail(str(e))
    if want_json(ctx, json_out):
        emit_json(data)
        return
    con = console()
    c = data["counts"]
    con.print(f"[bold]{data['path']}[/]  {data['fingerprint']}")
    if data["literals"] is not None:
        dropped = c.get("literal_triples_dropped")
        note = f" ({dropped:,} literal triples dropped)" if dropped else ""
        con.print(f"RDF literals: {data['literals']}{note}")
    con.print(
        f"triples {c['triples']:,}  entities {c['entities']:,} (named {c['named']:,}, "
        f"unnamed {c['unnamed']:,}, isolated {c['isolated']:,})  relations {c['relations']:,}  "
        f"noise relations {data['noise_relations']:,} ({data['noise_triples']:,} triples)"
    )
    rel = Table("relation", "triples", title=f"top {top} relations")
    for r in data["relations"]:
        rel.add_row(r["relation"] + (" (noise)" if r["noise"] else ""), f"{r['triples']:,}")
    con.print(rel)
    deg = Table("degree", "mean", "median", "p99", "max")
    for k, v in data["degree"].items():
        deg.add_row(k, str(v["mean"]), str(v["median"]), str(v["p99"]), f"{v['max']:,}")
    con.print(deg)
    hubs = Table("hub", "name", "degree", "out", "in", title=f"top {top} hubs")
    for h in data["hubs"]:
        hubs.add_row(h["id"], h["name"], f"{h['degree']:,}", f"{h['out']:,}", f"{h['in']:,}")
    con.print(hubs)
    inv = data.get("inverse_relations") or []
    con.print(f"inverse relation pairs (one hop in PoG): {len(inv) or 'none'}")
    for p in inv[:top]:
        con.print(f"  {p['relation']} <-> {p['inverse']} ({p['source']}, mirrored {p['mirrored']})")


def register(app: typer.Typer) -> None:
    kg_app = typer.Typer(
        cls=CLIGroup, help="Build and inspect knowledge-graph stores.", no_args_is_help=True
    )
    kg_app.command("build")(build)
    kg_app.command("info")(info)
    from kgreason.cli.kg_subset import subset

    kg_app.command("subset")(subset)
    app.add_typer(kg_app, name="kg")
