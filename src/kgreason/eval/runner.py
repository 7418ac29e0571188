"""Runs a method over a dataset: per-question isolation, resumable, replayable.

One question's failure is recorded with a named error kind and never stops the run.
Results are appended and flushed as each question finishes, so a run killed at any moment
resumes with `resume=True` and recomputes nothing that finished.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from kgreason.eval import rundir
from kgreason.eval.gold_sparql import gold_fields
from kgreason.eval.lkg_scores import recall_scores
from kgreason.eval.methods import Method, Outcome
from kgreason.eval.metrics import any_hit, exact_match, f1, lenient_hit, strict_hit
from kgreason.eval.records import Record
from kgreason.kg.base import KGError
from kgreason.llm.base import ChatLLM, LLMBudgetExceeded, LLMError, LLMOutputError
from kgreason.llm.usage import Budget, MeteredLLM, UsageLedger
from kgreason.tracing import Callback, Tracer

Progress = Callable[[int, int], None]


@dataclass
class RunSummary:
    out: Path
    total: int
    done_before: int
    computed: int
    errors: int


def score(record: Record, outcome: Outcome) -> dict[str, Any]:
    """Scores for one question; strict and lenient are always reported side by side."""
    if record.task == "logic":
        pred = outcome.answers[0] if outcome.answers else None
        return {"correct": pred == record.label}
    text = outcome.output_text or " ".join(outcome.answers)
    scores: dict[str, Any] = {
        "strict_hit1": strict_hit(outcome.answers, record.answers),
        "any_hit": any_hit(outcome.answers, record.answers),
        "lenient_hit": lenient_hit(text, record.answers),
    }
    if record.task == "multihop":
        first = outcome.answers[0] if outcome.answers else ""
        scores["em"] = exact_match(first, record.answers)
        scores["f1"] = f1(first, record.answers)
        if outcome.retrieved is not None:  # SymbolLKG eq. 3 against the supporting titles
            scores.update(recall_scores(outcome.retrieved, record.supporting_titles))
    return scores


def classify_error(exc: BaseException) -> str:
    named = getattr(type(exc), "error_kind", None)  # transport errors name themselves,
    if isinstance(named, str):  # with the same names PoG's results use
        return named
    if isinstance(exc, LLMBudgetExceeded):
        return "budget_exceeded"
    if isinstance(exc, LLMOutputError):
        return "unparseable_reply"
    if isinstance(exc, LLMError):
        return "llm_error"
    if isinstance(exc, KGError):
        return "kg_error"
    if isinstance(exc, asyncio.TimeoutError):
        return "timeout"
    return "internal_error"


async def answer_one(
    index: int, record: Record, method: Method, llm: ChatLLM | None, budget: Budget | None
) -> tuple[dict[str, Any], dict[str, Any]]:
    ledger = UsageLedger()
    metered = MeteredLLM(llm, ledger, budget) if llm is not None else None
    t0 = time.perf_counter()
    try:
        outcome = await method.answer(record, metered)
    except Exception as e:  # one question's failure is recorded, never fatal to the run
        outcome = Outcome(error_kind=classify_error(e), error=f"{type(e).__name__}: {e}")
    wall = time.perf_counter() - t0
    usage = ledger.to_dict()
    # latency is kept out of results.jsonl (it goes to timings.jsonl) so that a resumed or
    # replayed run produces a byte-identical results file
    latency = {stage: u.pop("latency_s") for stage, u in usage.items()}
    row: dict[str, Any] = {
        "index": index,
        "id": record.id,
        "dataset": record.dataset,
        "question": record.question,
        "gold": [a.name for a in record.answers] if record.task != "logic" else record.label,
        "hops": record.hops,
        "qtype": record.qtype,
        # only where the dataset says (MuSiQue): other datasets' rows stay byte-identical
        **({"answerable": record.answerable} if record.answerable is not None else {}),
        "method": method.name,
        "answers": outcome.answers,
        "answer_ids": outcome.answer_ids,
        "answer_kind": outcome.answer_kind,
        "output_text": outcome.output_text,
        "phase": outcome.phase,
        "error_kind": outcome.error_kind,
        "error": outcome.error,
        "paths": outcome.paths,
        "names": outcome.names,
        "topics": outcome.topics,
        "extra": outcome.extra,
        "usage": usage,
        "llm_calls": ledger.total().calls,
        # calls as the PoG paper counts them: re-asks and extra batches excluded (llm/usage.py)
        "paper_calls": ledger.total().paper_calls,
        "prompt_tokens": ledger.total().prompt_tokens,
        "completion_tokens": ledger.total().completion_tokens,
        **score(record, outcome),
        # gold-SPARQL fields (sparql_length, relation_overlap), only when the record has one
        **gold_fields(record.sparql, outcome.paths),
    }
    return row, {"wall_s": round(wall, 6), "llm_latency_s": latency}


def prompt_changes(old: Any, new: Any) -> list[str]:
    """Prompt and schema files whose hash differs between a run's recorded config and now.
    Only files recorded on both sides are compared: a run recorded before schema files
    were hashed (or before hashes were per method) resumes, and records them from then on."""
    if not isinstance(old, dict) or not isinstance(new, dict):
        return []
    return sorted(k for k in old.keys() & new.keys() if old[k] != new[k])


async def run(
    records: Sequence[Record],
    method: Method,
    llm: ChatLLM | None,
    out: Path,
    *,
    config: dict[str, Any],
    concurrency: int = 1,
    resume: bool = False,
    budget: Budget | None = None,
    progress: Progress | None = None,
    callbacks: Sequence[Callback] = (),
) -> RunSummary:
    """Answer every record not already in `out`. `callbacks` (kgreason.tracing) hear a
    `eval.question` stage per question, with its index, id, error kind and LLM usage."""
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise rundir.io_error(out, e) from None
    # the lock comes first: two writers must never both pass the checks below
    with rundir.RunLock(out):
        tracer = Tracer("eval", callbacks)
        return await _run_locked(
            records, method, llm, out, config, concurrency, resume, budget, progress, tracer
        )


def _trained_policy(config: dict[str, Any]) -> str:
    """How a run treated the ranker's training questions, as a verb ("kept" before #34)."""
    policy = (config.get("trained_questions") or {}).get("policy")
    return "excluded" if policy == "exclude" else "kept"


async def _run_locked(
    records: Sequence[Record],
    method: Method,
    llm: ChatLLM | None,
    out: Path,
    config: dict[str, Any],
    concurrency: int,
    resume: bool,
    budget: Budget | None,
    progress: Progress | None,
    tracer: Tracer,
) -> RunSummary:
    results_path = out / rundir.RESULTS
    timings_path = out / rundir.TIMINGS
    config_path = out / rundir.CONFIG
    if results_path.exists() and not resume:
        raise rundir.RunDirError(
            f"{out} already holds a run: pass --resume or choose another --out"
        )
    if resume and config_path.exists():
        try:
            old = json.loads(config_path.read_text("utf-8"))
        except (OSError, ValueError) as e:
            msg = f"cannot resume {out}: unreadable {rundir.CONFIG}: {e}"
            raise rundir.RunDirError(msg) from None
        for key in ("dataset", "split", "hops", "variant", "method", "sample", "seed"):
            if old.get(key) is None and key in (config.get("defaulted") or []):
                continue  # runs before #34 recorded None for the dataset's default
            if old.get(key) != config.get(key):
                raise rundir.RunDirError(
                    f"cannot resume {out}: its {key} is {old.get(key)!r}, not {config.get(key)!r}"
                )
        was, now = _trained_policy(old), _trained_policy(config)
        if was != now:
            raise rundir.RunDirError(
                f"cannot resume {out}: it {was} the questions the ranker was trained on, this "
                f"command {now} them (--include-trained keeps them)"
            )
        changed = prompt_changes(old.get("prompt_hashes"), config.get("prompt_hashes"))
        if changed:
            shown = ", ".join(changed[:5]) + (
                f" and {len(changed) - 5} more" if changed[5:] else ""
            )
            raise rundir.RunDirError(
                f"cannot resume {out}: prompt files changed since it started: {shown} (its "
                "results would mix two prompt versions; start a new run with another --out)"
            )
    rundir.write_json_atomic(config_path, config)
    try:
        for p in (results_path, timings_path):  # cut a torn line before appending
            rundir.cut_torn_tail(p)
    except OSError as e:
        raise rundir.io_error(out, e) from None
    done = {r["id"] for r in rundir.read_jsonl_tolerant(results_path)}
    todo = [(i, r) for i, r in enumerate(records) if r.id not in done]
    results = rundir.JsonlAppender(results_path)
    timings = rundir.JsonlAppender(timings_path)
    sem = asyncio.Semaphore(max(1, concurrency))
    lock = asyncio.Lock()
    finished = len(records) - len(todo)
    errors = 0
    if progress:
        progress(finished, len(records))

    async def work(i: int, rec: Record) -> None:
        nonlocal finished, errors
        async with sem:
            with tracer.stage("question", index=i, id=rec.id) as st:
                row, timing = await answer_one(i, rec, method, llm, budget)
                st.size(error_kind=row["error_kind"], llm_calls=row["llm_calls"])
                st.size(tokens=row["prompt_tokens"] + row["completion_tokens"])
        async with lock:
            results.write(row)
            timings.write({"id": rec.id, "index": i, **timing})
            finished += 1
            errors += row["error_kind"] is not None
            if progress:
                progress(finished, len(records))

    try:
        await _gather_or_cancel([work(i, r) for i, r in todo])
    finally:
        results.close()
        timings.close()
    rundir.rewrite_sorted(results_path, "index")
    rundir.rewrite_sorted(timings_path, "index")
    return RunSummary(out, len(records), len(records) - len(todo), len(todo), errors)


async def _gather_or_cancel(coros: list[Coroutine[Any, Any, None]]) -> None:
    """Run all; on the first failure (a disk-full write) cancel the rest and re-raise it, so
    no task keeps computing answers that cannot be saved."""
    tasks = [asyncio.ensure_future(c) for c in coros]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


def summary_dict(s: RunSummary) -> dict[str, Any]:
    d = asdict(s)
    d["out"] = str(s.out)
    return d
