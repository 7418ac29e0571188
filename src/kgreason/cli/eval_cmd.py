"""`kgreason eval` and `kgreason report`."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from kgreason.cli import common
from kgreason.cli.common import console, emit_json, err_console, fail, settings, want_json
from kgreason.cli.embedder_option import EmbedderOption, embedder_override
from kgreason.cli.eval_summary import headline, print_headline
from kgreason.config import Settings
from kgreason.eval import rundir
from kgreason.eval.datasets import SPECS, default_split, load, load_hops, variants
from kgreason.eval.loaders import DatasetError
from kgreason.eval.runner import RunSummary, run, summary_dict
from kgreason.eval.selection import EXCLUDE, parse_hops, select, trained_config
from kgreason.eval.setup import METHODS, run_config
from kgreason.llm.base import ChatLLM, LLMError
from kgreason.llm.factory import build_llm, llm_configured
from kgreason.llm.usage import Budget


def _replay_args(run_dir: Path) -> dict:
    cfg_path = run_dir / rundir.CONFIG
    if not cfg_path.is_file():
        fail(f"{run_dir} is not a run directory (no {rundir.CONFIG})")
    return json.loads(cfg_path.read_text("utf-8"))


def _cap_flag(value: str | None) -> str | None:
    """--max-subgraph-triples as the setting takes it: a positive count or "none"."""
    if value is None or value.strip().lower() == "none":
        return value
    if not value.strip().isdigit() or int(value) < 1:
        fail(f"--max-subgraph-triples: expected a number of triples (1 or more) or none, "
             f"got {value!r}")  # fmt: skip
    return value.strip()


def _load_dataset(
    dataset: str,
    split: str | None,
    hops: list[int] | None,
    data_dir: Path | None,
    variant: str | None = None,
):
    """The dataset's records (a named dataset, or a PathQuestion-family file); skipped lines
    are shown, and a file with no readable question is a failure."""
    try:
        if variant is not None and not variants(dataset):
            fail(f"dataset '{dataset}' has no variants (--variant is for musique)")
        if dataset not in SPECS and Path(dataset).is_file():  # an IRN/PathQuestion file
            data = load("pq", path=dataset)
        elif hops and len(hops) > 1:
            data = load_hops(dataset, split=split, hops=hops, root=data_dir)
        else:
            one = hops[0] if hops else None
            data = load(dataset, split=split, hops=one, root=data_dir, variant=variant)
    except DatasetError as e:
        fail(str(e))
    if not data.records:  # every line skipped: nothing to evaluate is a failure
        first = f"; first: {data.problems[0]}" if data.problems else ""
        fail(f"{dataset}: no question could be read ({len(data.problems)} skipped{first})")
    for p in data.problems[:20]:
        err_console().print(f"skipped {p}", markup=False, style="yellow")
    return data


def _eval_llm(
    s: Settings, method: str, no_cache: bool, out: Path, replay_transcript: Path | None
) -> ChatLLM | None:
    """The run's LLM: recording a transcript into the run, or answering from one (replay)."""
    if method == "llm-free":
        return None
    if replay_transcript is None and not llm_configured(s.llm):
        if method == "symbollkg":  # no LLM-free SymbolLKG: its graph is an LLM extraction
            from kgreason.lkg.pipeline import NEEDS_LLM

            fail(f"{NEEDS_LLM} (there is no LLM-free SymbolLKG: the graph is an LLM extraction)")
        fail(
            f"method '{method}' needs an LLM: set OPENAI_BASE_URL / OPENAI_API_KEY, or use --method llm-free"
        )
    try:
        return build_llm(
            s.llm,
            cache=False if no_cache else None,
            transcript=None if replay_transcript else out / rundir.TRANSCRIPT,
            replay=replay_transcript,
        )
    except LLMError as e:
        fail(str(e))


def _run_with_progress(
    label: str,
    start: Callable[[Callable[[int, int], None]], Coroutine[Any, Any, RunSummary]],
    total: int,
) -> RunSummary:
    """Run the evaluation under a transient progress bar on stderr."""
    columns = (TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, TimeElapsedColumn(), console=err_console(), transient=True) as bar:
        task = bar.add_task(label, total=total)
        try:
            return asyncio.run(start(lambda done, _total: bar.update(task, completed=done)))
        except rundir.RunDirError as e:
            fail(str(e))


def _report(
    ctx: typer.Context,
    json_out: bool,
    result: dict[str, Any],
    summary: RunSummary,
    out: Path,
    method: str,
    replay: Path | None,
) -> None:
    """Print the run's figures; a replay that differs from its original run fails."""
    if replay is not None:
        same = (replay / rundir.RESULTS).read_bytes() == (out / rundir.RESULTS).read_bytes()
        result["identical_to_original"] = same
    if want_json(ctx, json_out):
        emit_json(result)
    else:
        console().print(
            f"run written to {out}: {summary.computed} computed, {summary.done_before} "
            f"already done, {summary.errors} ended by an error"
        )
        print_headline(result["headline"], method)
        if replay is not None and result["identical_to_original"]:
            console().print("replay identical to the original run")
    if replay is not None and not result["identical_to_original"]:
        fail(f"replay DIFFERS from the original run: compare {replay} and {out}")


def register(app: typer.Typer) -> None:
    @app.command("eval")
    def eval_command(
        ctx: typer.Context,
        dataset: str = typer.Argument(
            None,
            help=f"One of: {', '.join(sorted(SPECS))}; or a PathQuestion-family file (PQ, PQL, "
            "6 columns) to evaluate against --kg.",
        ),
        split: str | None = typer.Option(None, help="Dataset split (default: the dataset's)."),
        variant: str | None = typer.Option(
            None,
            help="MuSiQue: answerable (MuSiQue-Ans, the default) | full (MuSiQue-Full, with "
            "the unanswerable twins); each is its own file under --data-dir.",
        ),
        hops: str | None = typer.Option(
            None,
            help="MetaQA / PathQuestion hop count(s): 1, 1,2,3 or all (default: the dataset's "
            "first; the table says so). With several, --limit counts per hop.",
        ),
        limit: int | None = typer.Option(None, help="Only the first N questions."),
        sample: int | None = typer.Option(
            None,
            help="A seeded random sample of N questions (the PoG paper's CWQ setting is "
            "--sample 1000); resumed runs keep it. With --limit, the first of the sample.",
        ),
        seed: int = typer.Option(0, help="Seed of --sample."),
        strategy: str | None = typer.Option(
            None,
            help="PoG path pruning: fuzzy-precise (default) | three-step | fuzzy | fuzzy-branch.",
        ),
        no_summary: bool = typer.Option(
            False, "--no-summary", help="PoG without path summaries (Table 6 ablation)."
        ),
        max_subgraph_triples: str | None = typer.Option(
            None,
            "--max-subgraph-triples",
            help="PoG's question-subgraph cap: N triples, or none for no cap (the paper's "
            "setting; default pog.max_subgraph_triples, 200000). The table counts the "
            "questions it cut.",
        ),
        method: str = typer.Option("pog", help=f"One of: {', '.join(METHODS)}."),
        concurrency: int = typer.Option(1, help="Questions answered at once."),
        out: Path | None = typer.Option(None, help="Run directory (default runs/DATASET-METHOD)."),
        resume: bool = typer.Option(
            False, help="Continue a killed run; finished questions are kept."
        ),
        replay: Path | None = typer.Option(
            None, help="Re-run a recorded run from its transcript, with no LLM."
        ),
        data_dir: Path | None = typer.Option(
            None, help="Directory holding the datasets (or KGREASON_DATA_DIR)."
        ),
        kg: Path | None = typer.Option(
            None, "--kg", help="KG store directory (default: bundled MetaQA)."
        ),
        sparql: str | None = typer.Option(None, help="SPARQL endpoint URL instead of a store."),
        dialect: str | None = typer.Option(None, help="freebase | wikidata | generic"),
        no_cache: bool = typer.Option(False, "--no-cache", help="Bypass the LLM response cache."),
        ranker: str | None = typer.Option(
            None,
            "--ranker",
            help="Path ranker: auto | none | hop-aligned | order-aligned | artefact DIR.",
        ),
        include_trained: bool = typer.Option(
            False,
            "--include-trained",
            help="Keep the questions the path ranker was trained on (left out by default; "
            "the table then warns that its scores flatter the ranker).",
        ),
        backup_answer: str | None = typer.Option(
            None,
            "--backup-answer",
            help="SymbolLKG, unsolved problems: none (count wrong; default) | random "
            "(Logic-LM's protocol: a random option seeded by the problem id, recorded as a "
            "backup). The scores report accuracy under both.",
        ),
        embedder: EmbedderOption = None,
        json_out: common.JsonOption = False,
    ) -> None:
        """Evaluate a method on a dataset; results are appended per question (resumable)."""
        started = time.perf_counter()
        replay_transcript = None
        if replay is not None:
            cfg = _replay_args(replay)
            dataset, split, hops, limit, method = (
                cfg[k] for k in ("dataset", "split", "hops", "limit", "method")
            )
            sample, seed = cfg.get("sample"), cfg.get("seed") or 0
            variant = cfg.get("variant")
            recorded = cfg.get("settings") or {}  # PoG's strategy and summary as recorded
            strategy = strategy or recorded.get("pog.strategy")
            no_summary = no_summary or recorded.get("pog.summary") is False
            if max_subgraph_triples is None and "pog.max_subgraph_triples" in recorded:
                cap = recorded["pog.max_subgraph_triples"]  # the same subgraphs, same prompts
                max_subgraph_triples = "none" if cap is None else str(cap)
            backup_answer = backup_answer or recorded.get("lkg.backup_answer")
            # runs before #34 kept the ranker's training questions: a replay keeps them too
            trained = (cfg.get("trained_questions") or {}).get("policy")
            include_trained = include_trained or trained != EXCLUDE
            replay_transcript = replay / rundir.TRANSCRIPT
            out = out or replay.with_name(replay.name + "-replay")
        if dataset is None:
            fail("name a DATASET, or pass --replay RUN_DIR")
        if method not in METHODS:
            fail(f"unknown method '{method}' (choose from {', '.join(METHODS)})")
        flags = {
            "kg.store": kg,
            "kg.sparql_url": sparql,
            "kg.dialect": dialect,
            "pog.ranker": ranker,
            "pog.strategy": strategy,
            "pog.summary": False if no_summary else None,
            "pog.max_subgraph_triples": _cap_flag(max_subgraph_triples),
            "lkg.backup_answer": backup_answer,
        }
        s = settings(ctx, **flags, **embedder_override(embedder)).settings
        if sample is not None and sample < 1:
            fail("--sample must be at least 1")
        try:
            hop_list, hops_defaulted = parse_hops(dataset, hops)
        except ValueError as e:
            fail(str(e))
        data = _load_dataset(dataset, split, hop_list, data_dir, variant)
        out = out or Path("runs") / f"{dataset}-{method}"
        llm = _eval_llm(s, method, no_cache, out, replay_transcript)
        if replay_transcript is not None and out.exists() and not resume:
            fail(f"{out} exists: remove it or pass --out")
        from kgreason.eval.adapters import build_method

        try:
            built = build_method(method, s, dataset=dataset)
        except Exception as e:  # setup errors (missing KG, model...) end the command plainly
            fail(f"cannot set up method '{method}': {e}")
        kg_of = getattr(built.method, "kg", None)
        if kg_of is not None:  # many questions: a large store's kernels pay back at once
            from kgreason.heap import warm_kernels

            warm_kernels(kg_of)
        per_hop = bool(hop_list and len(hop_list) > 1)
        sel = select(
            data.records, built.ranker, include_trained=include_trained,
            sample=sample, seed=seed, limit=limit, per_hop=per_hop,
        )  # fmt: skip
        records = sel.records
        if not records:
            fail(f"no question left: all {sel.excluded} were ranker training questions "
                 "(pass --include-trained to evaluate them anyway)")  # fmt: skip
        has_variants = variants(dataset) if dataset in SPECS else ()
        defaulted = [k for k, d in (("split", split is None), ("hops", hops_defaulted)) if d]
        defaulted += ["variant"] if has_variants and variant is None else []
        config = run_config(
            s,
            dataset=dataset,
            split=split or (default_split(dataset) if dataset in SPECS else None),
            hops=(hop_list if per_hop else hop_list[0]) if hop_list else None,
            defaulted=defaulted,
            limit=limit,
            method=method,
            model=s.llm.model if llm is not None else None,
            kg=built.kg_identity,
            extra_prompt_hashes=built.prompt_hashes,
        )
        if has_variants:  # recorded so --resume and --replay load the same file
            config["variant"] = variant or has_variants[0]
        if sample is not None:  # recorded so --resume and --replay draw the same sample
            config.update(sample=sample, seed=seed)
        config["ranker"] = built.ranker.config() if built.ranker is not None else None
        config["trained_questions"] = trained_config(sel, built.ranker)
        budget = Budget(s.llm.max_calls_per_question, s.llm.max_tokens_per_question)
        summary = _run_with_progress(
            f"{dataset} / {method}",
            lambda progress: run(
                records, built.method, llm, out, config=config, concurrency=concurrency,
                resume=resume, budget=budget, progress=progress,
            ),
            len(records),
        )  # fmt: skip
        result = summary_dict(summary)
        result["headline"] = headline(
            out, summary, len(data.problems), time.perf_counter() - started
        )
        _report(ctx, json_out, result, summary, out, method, replay)

    @app.command("report")
    def report_command(
        ctx: typer.Context,
        runs: list[Path] = typer.Argument(..., help="One or more run directories."),
        out: Path | None = typer.Option(None, help="Where to write report.md / report.html."),
        question: str | None = typer.Option(None, help="Question id whose paths are drawn."),
        json_out: common.JsonOption = False,
    ) -> None:
        """Write a Markdown and a self-contained HTML report for one or more runs."""
        from kgreason.eval.report import figures_json, write_report

        try:
            md, page = write_report(runs, out, question)
            figures = figures_json(runs) if want_json(ctx, json_out) else []
        except (rundir.RunDirError, OSError, json.JSONDecodeError) as e:
            fail(str(e))
        if want_json(ctx, json_out):
            emit_json({"markdown": str(md), "html": str(page), "runs": figures})
        else:
            console().print(f"wrote {md} and {page}")
