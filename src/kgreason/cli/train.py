"""`kgreason train ranker`: weak supervision from a KG's own paths, training of the path
ranker models, a validation report by held-out question templates, and the artefact."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from kgreason.cli import common
from kgreason.cli.common import console, emit_json, err_console, fail, settings, want_json


def _progress() -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console(),
        transient=True,
    )


def _table(valid: dict[str, dict], chosen: str, title: str) -> Table:
    t = Table(title=title)
    for c in ("model", "questions", "Hits@1", "set F1", "gold in top path"):
        t.add_column(c)
    for kind, per in valid.items():
        for key, m in per.items():
            t.add_row(
                f"{kind}{' *' if kind == chosen else ''} {key}",
                str(m["n"]),
                f"{m['hits1']:.1f}",
                f"{m['f1']:.1f}",
                f"{m['gold_in_top']:.1f}",
            )
    return t


def register(app: typer.Typer) -> None:
    train_app = typer.Typer(help="Train models used by kgreason (the path ranker).")
    app.add_typer(train_app, name="train")

    @train_app.command("ranker")
    def ranker_command(
        ctx: typer.Context,
        data: str = typer.Option(
            "generated",
            "--data",
            help="generated: label-free, questions generated from the KG's own triples; "
            "or a dataset with question-answer pairs (metaqa, pathquestion).",
        ),
        split: str = typer.Option("dev", help="Dataset split."),
        hops: str = typer.Option("1,2,3", help="Hop counts to load (MetaQA, PathQuestion)."),
        limit: int | None = typer.Option(
            None, help="Only the first N questions per hop count (generated: N per hop, 1500)."
        ),
        kg: Path | None = typer.Option(None, "--kg", help="KG store (default: bundled KG)."),
        data_dir: Path | None = typer.Option(None, help="Dataset root (like shared/data)."),
        out: Path = typer.Option(..., "--out", help="Directory of the ranker artefact."),
        models: str = typer.Option("linear,mlp", help="Models to compare (linear, mlp)."),
        epochs: int = typer.Option(4, min=1, help="Training epochs per model."),
        seed: int = typer.Option(0, help="Seed of the template split, sampling and init."),
        valid_fraction: float = typer.Option(0.2, help="Share of templates held out."),
        supervision: Path | None = typer.Option(
            None, help="Cache of the labelled paths (.npz): read if present, else written."
        ),
        paraphrase: bool = typer.Option(
            False,
            "--paraphrase",
            help="Label-free: have the configured LLM reword the generated questions as a "
            "person would ask them (answers still come from the KG).",
        ),
        json_out: common.JsonOption = False,
    ) -> None:
        """Train the path ranker on a KG: label-free from questions generated from its own
        triples (default), or from a dataset's question-answer pairs (no path labels needed)."""
        from kgreason.embed.errors import EmbedderError
        from kgreason.eval.loaders import DatasetError
        from kgreason.eval.ranker_training import GENERATED, TrainRequest, run_training
        from kgreason.kg.base import KGError
        from kgreason.llm.base import LLMError

        s = settings(ctx, **{"kg.store": kg}).settings
        try:
            hop_list = tuple(int(h) for h in hops.split(","))
        except ValueError:
            fail(f"--hops: expected comma-separated integers, got {hops!r}")
        kinds = tuple(k.strip() for k in models.split(",") if k.strip())
        bad = [k for k in kinds if k not in ("linear", "mlp")]
        if bad or not kinds:
            fail(f"--models: unknown model {bad[0] if bad else models!r} (linear, mlp)")
        if not 0 < valid_fraction < 1:
            fail(f"--valid-fraction must be between 0 and 1, got {valid_fraction}")
        req = TrainRequest(
            data,
            split,
            hop_list,
            limit,
            data_dir,
            out,
            kinds,
            epochs,
            seed,
            valid_fraction,
            supervision,
            paraphrase,
        )
        llm = None
        if paraphrase and data != GENERATED:
            fail(f"--paraphrase rewords generated questions, not --data {data}")
        if paraphrase:
            from kgreason.llm.factory import LLMNotConfigured, build_llm

            try:
                llm = build_llm(s.llm)
            except LLMNotConfigured as e:
                fail(f"--paraphrase needs an LLM: {e}")
        bars: dict[str, Any] = {}
        with _progress() as prog:

            def tick(stage: str, done: int, total: int) -> None:
                if stage not in bars:
                    bars[stage] = prog.add_task(stage, total=total)
                prog.update(bars[stage], completed=done, total=total)

            t0 = time.perf_counter()
            try:
                report = asyncio.run(run_training(s, req, tick, llm))
            except (DatasetError, KGError, EmbedderError, LLMError, ValueError) as e:
                fail(f"{type(e).__name__}: {e}")
        report["wall_s"] = round(time.perf_counter() - t0, 1)
        if want_json(ctx, json_out):
            emit_json(report)
            return
        c = console()
        sup = report["training"]
        title = "validation (held-out question templates)"
        if sup.get("label_free"):
            title = "validation (generated questions, held-out templates)"
        c.print(_table(report["validation"], report["model"]["kind"], title))
        if sup.get("label_free"):
            c.print(
                "label-free: the questions were generated from the KG's own relation walks "
                "(no labelled question was used). Experimental: label-free rankers ranked "
                "below the zero-shot order-aligned ranking on every KG measured "
                "(docs/ranker.md), so `pog.ranker = auto` keeps the zero-shot ranking; "
                f"`ask --ranker {report['path']}` uses this one"
            )
        done = (sup.get("generated") or {}).get("paraphrased")
        if done:
            kept = ", ".join(f"{k} {v}" for k, v in done["kept"].items()) or "none"
            c.print(
                f"paraphrased by {done['model'] or 'the LLM'}: {done['paraphrased']} of "
                f"{done['asked']} questions in {done['calls']} calls; kept as generated: {kept}"
            )
        c.print(
            f"questions: {sup['questions']} ({sup['skipped']} skipped: topic not in KG); "
            f"with >= 1 positive path: {sup['with_positive_path']} "
            f"({100 * sup['with_positive_path'] / max(sup['questions'], 1):.1f}%)"
        )
        c.print(
            f"chosen: {report['model']['kind']} ({report['model']['n_params']} parameters); "
            f"training {report['training']['train_s']} s; artefact {report['path']}"
        )
