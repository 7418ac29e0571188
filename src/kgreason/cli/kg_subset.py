"""`kgreason kg subset STORE --dataset cwq --hops D --out SUBSET` (eval/kg_subset.py)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import typer

from kgreason.cli import common
from kgreason.cli.common import console, emit_json, fail, settings, want_json


def subset(
    ctx: typer.Context,
    store: Path = typer.Argument(..., help="The full store (e.g. built from the Freebase dump)."),
    dataset: str = typer.Option(
        ..., "--dataset", help="cwq, webqsp, grailqa, simpleqa, webquestions, ..."
    ),
    questions: Path | None = typer.Option(
        None, "--questions", help="The question file (default: the dataset's file in the data dir)."
    ),
    split: str | None = typer.Option(
        None, "--split", help="Dataset split (default: its test split)."
    ),
    hops: int = typer.Option(..., "--hops", min=1, max=6, help="D: the neighbourhood depth."),
    out: Path = typer.Option(..., "--out", help="Subset store directory to create."),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Only the first N questions."),
    force: bool = typer.Option(False, "--force", help="Replace an existing store."),
    json_out: common.JsonOption = False,
) -> None:
    """Cut a small store holding what a question set needs.

    Each question's topic entities' D-hop subgraph as `ask` cuts it (same bounds and hub
    handling); reports entities, triples and, by hop, for how many questions the gold
    answers lie inside."""
    from kgreason.eval import datasets
    from kgreason.eval.kg_subset import cut, write
    from kgreason.eval.loaders import DatasetError
    from kgreason.kg.base import KGError
    from kgreason.kg.store import StoreKG
    from kgreason.kg.store.build import check_target

    loaded = settings(ctx)
    s = loaded.settings
    try:
        data = datasets.load(dataset, split=split, path=questions, root=datasets.data_dir())
    except (DatasetError, OSError) as e:
        fail(f"--dataset {dataset}: {e}")
    records = data.records[:limit] if limit else data.records
    if not records:
        fail(f"{dataset}: no questions loaded")
    try:
        kg = StoreKG(store, noise_prefixes=s.kg.noise_prefixes)
    except KGError as e:
        fail(str(e))
    try:
        check_target(out, force)  # before the cut, not after it
        out.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=f".{out.name}.walks-", dir=out.parent) as spool:
            taken = cut(kg, records, hops, s.pog, Path(spool))
            manifest = write(kg, taken, records, out, force=force)
    except KGError as e:
        fail(str(e))
    except OSError as e:
        fail(f"--out {out}: {e}")
    finally:
        kg.close()
    report = taken.report
    report.entities = int(manifest.counts["entities"])
    report.triples = int(manifest.counts["triples"])
    if want_json(ctx, json_out):
        emit_json({"store": str(out), "dataset": dataset, "hops": hops, **report.as_dict()})
        return
    con = console()
    con.print(
        f"subset {out}: {report.triples:,} triples, {report.entities:,} entities for "
        f"{report.questions:,} {dataset} questions ({report.no_topic} without a known topic, "
        f"{report.truncated} cut by a bound) in {report.seconds:.1f} s",
        soft_wrap=True,
        highlight=False,
    )
    n = report.with_gold_ids
    for h in range(1, hops + 1):
        some, every = report.gold_inside.get(h, 0), report.gold_all_inside.get(h, 0)
        con.print(
            f"  gold inside within {h} hop(s): {some:,} of {n:,} questions "
            f"({some / max(n, 1):.1%}; every gold answer: {every:,})",
            highlight=False,
            soft_wrap=True,
        )
