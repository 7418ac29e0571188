"""`kgreason doctor`: is this installation ready, and what is it configured to use?

Five sections, each independent so one failure does not hide the others:
  llm      the configured endpoint answers one tiny request (or: LLM-free mode), and the
           structured-output flavour requests to it would use (`llm.structured_output`)
  embed    the configured embedder loads, its dimension, load time and sentences/s
  solvers  which symbolic solvers are present
  kg       which knowledge graph is configured and whether it opens
  kernels  numba imports and PoG's compiled graph kernels are in numba's disk cache (never
           compiled here), or why numpy is used instead
A section whose code is not installed yet (optional import fails) is reported as such and does
not fail the command; anything configured but broken does (exit 1, one line on stderr).
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import time
from collections.abc import Mapping
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any

import typer
from rich.markup import escape

from kgreason.cli import common
from kgreason.cli.common import console, emit_json, err_console, fail, settings, want_json
from kgreason.config import Settings

if TYPE_CHECKING:
    from kgreason.llm.base import Message
    from kgreason.llm.openai_adapter import OpenAIChat

SECTIONS = ("llm", "embed", "solvers", "kg", "kernels")
NO_LLM = "no LLM configured (set OPENAI_BASE_URL / OPENAI_API_KEY); LLM-free mode"
PROBE: list[Message] = [{"role": "user", "content": "Reply with the single word: ok"}]
EMBED_SENTENCES = 32

Report = dict[str, Any]


def _optional(module: str, name: str) -> tuple[Any, Report | None]:
    """`module.name`, or a "missing" report when that part of kgreason is not installed."""
    try:
        mod = importlib.import_module(module)
    except ImportError as e:
        return None, {"status": "missing", "detail": f"not installed yet ({e})"}
    obj = getattr(mod, name, None)
    if obj is None:
        return None, {"status": "missing", "detail": f"not installed yet (no {module}.{name})"}
    return obj, None


async def check_llm(s: Settings, timeout_s: float) -> Report:
    from kgreason.llm import LLMError, OpenAIChat, llm_configured

    if not llm_configured(s.llm):
        return {
            "status": "not configured",
            "detail": NO_LLM,
            "structured": {
                "setting": s.llm.structured_output,
                "detail": f"{s.llm.structured_output} (not used: LLM-free mode)",
            },
        }
    # The bare adapter: no cache (a cached reply proves nothing), no retries (answer fast).
    llm = OpenAIChat(
        s.llm.model,
        s.llm.base_url,
        s.llm.api_key,
        min(timeout_s, s.llm.timeout_s),
        structured_output=s.llm.structured_output,
        structured_strict=s.llm.structured_strict,
    )
    out: Report = {"model": s.llm.model, "endpoint": llm.endpoint}
    try:
        try:
            c = await llm.complete(PROBE, stage="doctor", temperature=0.0, max_tokens=5)
        except LLMError as e:
            return {**out, "status": "error", "detail": str(e), "structured": await _flavour(llm)}
        return {
            **out,
            "status": "ok",
            "served_model": c.model,
            "latency_ms": round(c.latency_s * 1000, 1),
            "reply": c.text[:40],
            "usage_estimated": c.usage.estimated,
            "detail": f"model {c.model} at {llm.endpoint} answered in {c.latency_s * 1000:.0f} ms",
            "structured": await _flavour(llm),
        }
    finally:
        await llm.aclose()


async def _flavour(llm: OpenAIChat) -> Report:
    """The structured-output flavour `llm` would use, detected the way a real run does
    (docs/structured-outputs.md: HTTP probes of /models, /version, /api/version with a
    5 s deadline, capped by --timeout). Probe failures are reported, never raised: a
    broken probe must not hide the rest of the doctor's report."""
    setting = llm.structured_output
    rep: Report = {"setting": setting}
    if setting == "off":
        return {**rep, "flavour": "off", "detail": "off (configured): plain prompting"}
    try:
        cap = await llm.detect()
    except Exception as e:  # the diagnosis, not a crash
        why = f"{type(e).__name__}: {e}"
        return {**rep, "error": why, "detail": f"{setting}: detection failed ({why})"}
    version = ".".join(map(str, cap.vllm_version)) if cap.vllm_version else ""
    rep |= {"flavour": cap.flavour, "how": cap.how, "vllm_version": version or None}
    shown = f"{cap.flavour} {version}".strip()
    line = f"{shown} ({cap.how})" if setting == "auto" else f"{shown} (configured)"
    if cap.flavour == "vllm" and not version:
        line += "; vLLM release unknown (GET /version unread): structured_outputs form"
    if cap.failed:
        rep["probe_failures"] = list(cap.failed)
        line += f"; probes that failed: {'; '.join(cap.failed)}"
    return {**rep, "detail": f"auto -> {line}" if setting == "auto" else line}


def check_embed(s: Settings) -> Report:
    build, missing = _optional("kgreason.embed", "build_embedder")
    if missing:
        return missing
    try:
        t0 = time.perf_counter()
        emb = build(s.embed)
        emb.embed(["warm-up"])  # backends may load lazily: count that as load time
        load_s = time.perf_counter() - t0
        texts = [
            f"entity {i} located in country {i % 7} near river {i * 3}"
            for i in range(EMBED_SENTENCES)
        ]
        t1 = time.perf_counter()
        m = emb.embed(texts)
        rate = len(texts) / max(time.perf_counter() - t1, 1e-9)
    except Exception as e:  # any failure here is the diagnosis
        return {"status": "error", "backend": s.embed.backend, "detail": f"{type(e).__name__}: {e}"}
    return {
        "status": "ok",
        "backend": s.embed.backend,
        "name": emb.name,
        "dim": int(m.shape[1]),
        "load_s": round(load_s, 3),
        "sentences_per_s": round(rate, 1),
        "detail": (
            f"{emb.name} (dim {m.shape[1]}) loaded in {load_s:.2f} s, "
            f"{rate:.0f} sentences/s on {len(texts)} sentences"
        ),
    }


def check_solvers(solvers: Any = None) -> Report:
    """Each solver of `solvers` (a SolverRegistry; default_solvers() when None)."""
    available, missing = _optional("kgreason.lkg.solvers", "available")
    if missing:
        return missing
    try:
        found = available(solvers=solvers)
    except Exception as e:
        return {"status": "error", "detail": f"{type(e).__name__}: {e}"}
    if isinstance(found, Mapping):
        solvers = {str(k): v for k, v in found.items()}
        detail = ", ".join(f"{k}: {v}" for k, v in solvers.items())
    else:
        solvers = {str(x): True for x in found}
        detail = ", ".join(solvers)
    # the same preflight as a real run: "unavailable" = cannot run as the sandbox user
    absent = [
        k for k, v in solvers.items() if v is False or str(v).startswith(("missing", "unavailable"))
    ]
    # a "[warning: ...]" (e.g. runs without the drop to nobody) stays in the detail
    status = "partial" if absent or not solvers else "ok"
    return {"status": status, "solvers": solvers, "detail": detail or "none found"}


async def check_kg(s: Settings) -> Report:
    open_kg, missing = _optional("kgreason.kg", "open_kg")
    if missing:
        return missing
    files = ", ".join(map(str, s.kg.files))
    where = str(s.kg.sparql_url or s.kg.store or files or "bundled KG")
    if where == "bundled KG":
        from kgreason.kg.bundled import bundled_store_built, bundled_store_target

        if not bundled_store_built():  # building it is the first question's job, not doctor's
            target = bundled_store_target()
            return {
                "status": "ok",
                "configured": where,
                "built": False,
                "detail": f"bundled MetaQA KG, not built yet: the first `kgreason ask` builds"
                f" it into {target} (~2 s, once)",
            }
    try:
        kg = open_kg(s.kg)
        if inspect.isawaitable(kg):
            kg = await kg
        name = str(getattr(kg, "name", type(kg).__name__))
        fingerprint = kg.fingerprint() if hasattr(kg, "fingerprint") else ""
        layout = _store_layout(kg)
        await kg.aclose()
    except Exception as e:
        return {
            "status": "error",
            "configured": where,
            "detail": f"{where}: {type(e).__name__}: {e}",
        }
    detail = f"{name} (SPARQL, {s.kg.dialect})" if s.kg.sparql_url else name
    report: Report = {"status": "ok", "configured": where, "name": name, "fingerprint": fingerprint}
    if layout:
        report["layout"] = layout
        detail += f"; node ids {layout}"
    return {**report, "detail": detail}


def _store_layout(kg: object) -> str:
    """A local store's node-id layout: "in key order", or first-appearance with the hint to
    rebuild (PoG's clustering is ~1.5x faster on key-ordered stores); "" for other KGs."""
    from kgreason.kg.store.names import NameIndex

    index = getattr(kg, "index", None)
    if not isinstance(index, NameIndex) or index.key_rank is None:
        return ""
    if index.key_ordered:
        return "in key order"
    return (
        "in first-appearance order (built by an earlier kgreason; `kgreason kg build "
        "--force` makes PoG's clustering ~1.5x faster)"
    )


#: what a cold kernel cache means, for the kernels section: not an error, a one-time cost
NOT_COMPILED = (
    "the first large question (or `kgreason kg build` of a large store) compiles them once, ~20 s"
)


def check_kernels() -> Report:
    """PoG's compiled kernels (kgreason.jit): whether numba imports, and how many kernels
    numba's disk cache holds (read from its index files: never compiled here, so a fresh
    install's doctor stays fast). A cold cache is "not compiled", not an error; numpy forms
    when switched off or numba is missing (slower on large KGs, same results: "partial")."""
    from kgreason import jit as kernels
    from kgreason.heap import kernel_cache

    if kernels.jit_mode() == "off":
        return {"status": "partial", "detail": "off (KGREASON_JIT=0): numpy forms only"}
    try:
        import numba
    except ImportError as e:
        return {
            "status": "partial",
            "detail": f"numba not importable ({e}): numpy forms only (same answers; slower on "
            "KGs of millions of triples: pip install 'kgreason[jit]')",
        }
    try:
        states = kernel_cache()
    except Exception as e:  # a section's failure must not hide the others
        return {"status": "error", "detail": f"reading the kernels' cache failed: {e}"}
    cached = sum(v is True for v in states.values())
    unknown = sum(v is None for v in states.values())
    total = len(states)
    out: Report = {
        "numba": numba.__version__,
        "kernels": total,
        "cached": cached,
        "mode": kernels.jit_mode(),
        "threads": kernels.threads(),
    }
    use = f"used for large KGs; mode {kernels.jit_mode()}, up to {kernels.threads()} threads"
    head = f"numba {numba.__version__}: {cached}/{total} kernels cached"
    if cached == total:
        return {**out, "status": "ok", "detail": f"{head} ({use})"}
    if unknown == total:  # numba's cache internals changed: nothing to tell, nothing wrong
        return {
            **out,
            "status": "ok",
            "detail": f"numba {numba.__version__}: kernels' cache state unknown ({use})",
        }
    missing = [k for k, v in states.items() if v is False]
    out["not_cached"] = missing
    if cached == 0:
        what = f"numba {numba.__version__}: kernels not compiled yet ({cached}/{total} cached)"
    else:
        what = f"{head}; {len(missing)} not compiled yet"
    return {**out, "status": "not compiled", "detail": f"{what}: {NOT_COMPILED}"}


async def check(name: str, s: Settings, timeout_s: float) -> Report:
    """Run one section's check."""
    if name == "llm":
        return await check_llm(s, timeout_s)
    if name == "embed":
        return check_embed(s)
    if name == "solvers":
        return check_solvers()
    if name == "kernels":
        return check_kernels()
    return await check_kg(s)


def run_checks(
    s: Settings, sections: list[str], timeout_s: float, *, show_progress: bool = False
) -> dict[str, Report]:
    out: dict[str, Report] = {}
    for name in sections:
        # a spinner on stderr: loading an embedder or waiting on an endpoint takes seconds
        status = err_console().status(f"checking {name}...") if show_progress else nullcontext()
        with status:
            out[name] = asyncio.run(check(name, s, timeout_s))
    return out


def _failure(report: dict[str, Report]) -> str | None:
    bad = [(k, r) for k, r in report.items() if r["status"] == "error"]
    if not bad:
        return None
    k, r = bad[0]
    more = f" (and {len(bad) - 1} more failing section(s))" if len(bad) > 1 else ""
    return f"doctor: {k}: {r['detail']}{more}"


def register(app: typer.Typer) -> None:
    @app.command("doctor")
    def doctor_command(
        ctx: typer.Context,
        json_out: common.JsonOption = False,
        section: list[str] = typer.Option(
            None, "--section", "-s", help=f"Check only these ({', '.join(SECTIONS)}); repeatable."
        ),
        timeout_s: float = typer.Option(10.0, "--timeout", help="LLM probe timeout (seconds)."),
    ) -> None:
        """Check the LLM endpoint, embedder, solvers, KG and graph kernels in use here."""
        chosen = list(dict.fromkeys(section or SECTIONS))
        unknown = [x for x in chosen if x not in SECTIONS]
        if unknown:
            fail(f"unknown doctor section '{unknown[0]}' (choose from {', '.join(SECTIONS)})")
        loaded = settings(ctx)
        as_json = want_json(ctx, json_out)
        report = run_checks(loaded.settings, chosen, timeout_s, show_progress=not as_json)
        problem = _failure(report)
        if as_json:
            emit_json({**report, "ok": problem is None})
        else:
            out = console()
            for name, r in report.items():
                colour = {"ok": "green", "error": "red"}.get(r["status"], "yellow")
                out.print(
                    f"[bold]{name:<8}[/] [{colour}]{r['status']}[/]  {escape(str(r['detail']))}",
                    soft_wrap=True,
                )
                if "structured" in r:  # the llm section's second line
                    shown = escape(str(r["structured"]["detail"]))
                    out.print(f"{'':<8} structured output: {shown}", soft_wrap=True)
        if problem:
            fail(problem)  # fail prints text as typed (no markup)
