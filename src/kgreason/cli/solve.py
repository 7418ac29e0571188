"""`kgreason solve`: SymbolLKG on one problem (--context), a Logic-LM dataset file
(--problems), or an existing solver program with no LLM at all (--program)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import typer

from kgreason.cli.common import JsonOption, console, emit_json, fail, settings, want_json
from kgreason.cli.lkg_common import (
    make_embedder,
    make_llm,
    parse_options,
    show_result,
)
from kgreason.config import Settings
from kgreason.lkg.pipeline import SolveResult, SymbolLKG
from kgreason.lkg.programs import formats
from kgreason.llm.usage import Budget
from kgreason.result import llm_error_kind


def _read(path: Path, what: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as e:
        fail(f"{what} {path}: {e.strerror or e}")


def load_problems(path: Path) -> list[dict[str, Any]]:
    """Logic-LM's dataset format: a JSON list of {id, context, question, options, answer}."""
    try:
        data = json.loads(_read(path, "problems file"))
    except json.JSONDecodeError as e:
        fail(f"{path}: not JSON (line {e.lineno}): {e.msg}")
    if isinstance(data, dict) and isinstance(data.get("problems"), list):
        data = data["problems"]
    if not isinstance(data, list):
        fail(f"{path}: expected a JSON list of problems")
    return data


_PROGRAM_HINT = "; to run an existing solver program without one: kgreason solve --program FILE"


def _pipeline(s: Settings, embed: bool, no_cache: bool, what: str) -> SymbolLKG:
    llm = make_llm(s, what, _PROGRAM_HINT, no_cache=no_cache)
    budget = Budget(s.llm.max_calls_per_question, s.llm.max_tokens_per_question)
    return SymbolLKG(llm, make_embedder(s, embed), s.lkg, budget=budget)


async def _one(pipe: SymbolLKG, i: int, p: Any) -> dict[str, Any]:
    pid = str(p.get("id", i)) if isinstance(p, dict) else str(i)
    gold = p.get("answer") if isinstance(p, dict) else None
    try:
        if not isinstance(p, dict) or not isinstance(p.get("question"), str):
            raise ValueError(f"problem {pid}: needs a 'question' string")
        r = await pipe.asolve(
            str(p.get("context", "")), p["question"], p.get("options") or None, id=pid
        )
        row = r.to_dict()
    except Exception as e:  # one failure never stops the batch
        q = str(p.get("question", "")) if isinstance(p, dict) else ""
        err = f"{type(e).__name__}: {e}"
        kind = llm_error_kind(e) or (
            "bad-problem" if isinstance(e, ValueError) else "internal-error"
        )
        row = SolveResult(id=pid, question=q, status="error", error_kind=kind, error=err).to_dict()
    row["gold"] = gold
    row["correct"] = None if gold is None else row["verdict"] == gold
    return row


async def solve_batch(
    pipe: SymbolLKG, problems: list[Any], out: Path | None, concurrency: int = 1
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Solve every problem (up to `concurrency` at once); a bad record or a crash is that
    problem's result. Rows come back in input order; `out` gets them as they finish."""
    sem = asyncio.Semaphore(max(1, concurrency))
    sink = out.open("a", encoding="utf-8") if out else None

    async def guarded(i: int, p: Any) -> dict[str, Any]:
        async with sem:
            row = await _one(pipe, i, p)
        if sink:
            sink.write(json.dumps(row, ensure_ascii=False) + "\n")
            sink.flush()
        return row

    try:
        rows = list(await asyncio.gather(*(guarded(i, p) for i, p in enumerate(problems))))
    finally:
        if sink:
            sink.close()
    graded = [r for r in rows if r["correct"] is not None]
    summary: dict[str, Any] = {
        "problems": len(rows),
        "solved": sum(r["status"] == "solved" for r in rows),
        "errors": sum(r["status"] == "error" for r in rows),
        "graded": len(graded),
        "correct": sum(bool(r["correct"]) for r in graded),
    }
    summary["accuracy"] = summary["correct"] / len(graded) if graded else None
    summary["execution_rate"] = summary["solved"] / len(rows) if rows else None
    return rows, summary


def run_program_file(
    text: str,
    fmt: str | None,
    question: str,
    options: list[str] | None,
    s: Settings,
    dataset: str | None = None,
) -> dict[str, Any]:
    """Route and solve an existing program with no LLM (`kgreason.lkg.programs`): the
    format is detected (or given) and the program runs on that route's sandboxed solver."""
    from dataclasses import asdict

    from kgreason.lkg.pipeline import solver_limits
    from kgreason.lkg.programs import run_program

    out = run_program(
        text, fmt, question=question, options=options, dataset=dataset,
        limits=solver_limits(s.lkg),
    )  # fmt: skip
    return asdict(out)


def _print_evidence(result: dict[str, Any]) -> None:
    """The solver's evidence for its verdict: a model (Z3) or a proof (Prover9, Horn)."""
    if result.get("model"):
        model = ", ".join(f"{k} = {v}" for k, v in sorted(result["model"].items()))
        console().print(f"model: {model}", soft_wrap=True, markup=False)
    if result.get("proof"):
        lines = str(result["proof"]).strip().splitlines()
        console().print("proof:", markup=False)
        for line in lines[:40]:
            console().print(f"  {line}", soft_wrap=True, markup=False)
        if len(lines) > 40:
            console().print(f"  ... ({len(lines) - 40} more lines; --json has all)", markup=False)


def _solve_program(
    program: Path,
    fmt: str | None,
    question: str | None,
    opts: list[str] | None,
    s: Settings,
    dataset: str | None,
    as_json: bool,
) -> None:
    """`--program`: run an existing solver program; a run without a verdict fails."""
    text = _read(program, "program file")
    try:
        result = run_program_file(text, fmt, question or "", opts, s, dataset)
    except ValueError as e:  # ProgramFormatError: unknown or unrecognised format
        fail(f"{program}: {e}")
    if as_json:
        emit_json(result)
    else:
        failed = result.get("status") != "ok"
        for k in ("format", "route", "verdict", "answer", "status", "error_kind", "error"):
            if k == "error" and failed:  # the stderr line below says it, once
                continue
            if result.get(k) is not None:
                console().print(f"{k}: {result[k]}", soft_wrap=True, markup=False)
        _print_evidence(result)
    if result.get("status") != "ok":
        fail(f"{program}: {failure_text(result)}")


def failure_text(result: dict[str, Any]) -> str:
    """`KIND: ERROR` of a failed program run, the kind once: solver errors often start
    with their kind already (`parse_error: missing ')'`)."""
    kind = str(result.get("error_kind") or result.get("status"))
    error = str(result.get("error") or "no verdict")
    return error if error.startswith(f"{kind}:") else f"{kind}: {error}"


def _print_batch(rows: list[dict[str, Any]], summary: dict[str, Any], as_json: bool) -> None:
    """`--problems`: one line per problem, then the totals (and accuracy when graded)."""
    if as_json:
        emit_json({"summary": summary, "results": rows})
        return
    c = console()
    for row in rows:
        mark = {True: "ok", False: "WRONG", None: ""}[row["correct"]]
        route = (row.get("route") or {}).get("route", "-")
        c.print(
            f"{row['id']}: {row['verdict'] or '-'} ({row['status']}, route {route}, "
            f"{len(row['attempts'])} attempt(s)) {mark}",
            soft_wrap=True, markup=False,
        )  # fmt: skip
    acc = summary["accuracy"]
    c.print(
        f"{summary['problems']} problems, {summary['solved']} solved, {summary['errors']} errors"
        + (f", accuracy {acc:.1%} ({summary['correct']}/{summary['graded']})" if acc is not None else ""),
        markup=False,
    )  # fmt: skip


def register(app: typer.Typer) -> None:
    @app.command("solve")
    def solve_command(
        ctx: typer.Context,
        context: Path | None = typer.Option(None, "--context", help="Text file with the premises."),
        question: str | None = typer.Option(None, "--question", help="The question to answer."),
        options: list[str] | None = typer.Option(
            None, "--options", help='An answer option ("A) ..."); repeat, or give a JSON list.'
        ),
        problems: Path | None = typer.Option(
            None,
            "--problems",
            help="Logic-LM dataset JSON: [{id, context, question, options, answer}].",
        ),
        program: Path | None = typer.Option(
            None, "--program", help="Run an existing solver program (no LLM needed)."
        ),
        fmt: str | None = typer.Option(
            None,
            "--format",
            help=", ".join(formats()) + " (default: detected).",
        ),
        dataset: str | None = typer.Option(
            None, "--dataset", help="--program: Logic-LM dataset name, for its answer letters."
        ),
        limit: int | None = typer.Option(None, help="--problems: only the first N."),
        concurrency: int = typer.Option(1, help="--problems: problems solved at once."),
        out: Path | None = typer.Option(None, "--out", help="--problems: append results (JSONL)."),
        embed: bool = typer.Option(True, "--embed/--no-embed", help="Vector anchors on/off."),
        no_cache: bool = typer.Option(False, "--no-cache", help="Bypass the LLM response cache."),
        json_out: JsonOption = False,
    ) -> None:
        """Answer a logic problem with SymbolLKG (LKG, retrieval, router, solver program)."""
        modes = [x for x in (context, problems, program) if x is not None]
        if len(modes) != 1:
            fail("give exactly one of --context FILE, --problems FILE.json or --program FILE")
        s = settings(ctx).settings
        opts = parse_options(options)
        as_json = want_json(ctx, json_out)
        if program is not None:
            _solve_program(program, fmt, question, opts, s, dataset, as_json)
        elif context is not None:
            if not question:
                fail("--context needs --question")
            pipe = _pipeline(s, embed, no_cache, "`kgreason solve --context`")
            r = asyncio.run(pipe.asolve(_read(context, "context file"), question, opts))
            show_result(r, as_json)
        elif problems is not None:
            items = load_problems(problems)[:limit] if limit else load_problems(problems)
            pipe = _pipeline(s, embed, no_cache, "`kgreason solve --problems`")
            rows, summary = asyncio.run(solve_batch(pipe, items, out, concurrency))
            _print_batch(rows, summary, as_json)
