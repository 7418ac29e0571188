"""What `kgreason solve` and `kgreason lkg` share: building the LLM and embedder from
settings, and printing a SymbolLKG result."""

from __future__ import annotations

from typing import Any

from kgreason.cli.common import console, emit_json, err_console, fail
from kgreason.config import Settings
from kgreason.llm.base import ChatLLM, LLMError

NO_LLM = "{what} needs an LLM (set OPENAI_BASE_URL / OPENAI_API_KEY){hint}"


def parse_options(options: list[str] | None) -> list[str] | None:
    """`--options` may be repeated, or given once as a JSON list."""
    if not options:
        return None
    if len(options) == 1 and options[0].lstrip().startswith("["):
        import json

        try:
            value = json.loads(options[0])
        except json.JSONDecodeError as e:
            fail(f"--options: not a JSON list: {e}")
        if not isinstance(value, list):
            fail("--options: expected a JSON list of strings")
        return [str(v) for v in value]
    return list(options)


def make_llm(s: Settings, what: str, hint: str = "", *, no_cache: bool = False) -> ChatLLM:
    from kgreason.llm.factory import build_llm, llm_configured

    if not llm_configured(s.llm):
        fail(NO_LLM.format(what=what, hint=hint))
    try:
        return build_llm(s.llm, cache=False if no_cache else None)
    except LLMError as e:
        fail(str(e))


def maybe_llm(s: Settings, *, no_cache: bool = False) -> ChatLLM | None:
    from kgreason.llm.factory import llm_configured

    return make_llm(s, "", no_cache=no_cache) if llm_configured(s.llm) else None


def make_embedder(s: Settings, enabled: bool) -> Any:
    """The configured embedder, or None (vector anchors off) with a warning if it cannot load."""
    if not enabled:
        return None
    try:
        from kgreason.embed.factory import build_embedder

        return build_embedder(s.embed)
    except Exception as e:  # a missing model must not stop a solve: BM25 + names still work
        err_console().print(f"[yellow]warning:[/] embedder unavailable ({e}); vector search off")
        return None


def print_result(r: Any) -> None:
    c = console()
    head = f"[bold]{r.id}[/] " if r.id else ""
    verdict = r.verdict if r.verdict is not None else "-"
    c.print(f"{head}verdict: [bold]{verdict}[/] ({r.status})", soft_wrap=True)
    if r.route is not None:
        rd = r.route
        agree = "disagrees" if rd.disagreement else "agrees"
        c.print(
            f"route: {rd.route} ({rd.source}); structural router {agree}: {rd.structural} "
            f"({rd.structural_reason})",
            soft_wrap=True, markup=False,
        )  # fmt: skip
    for a in r.attempts:
        line = f"attempt {a.index + 1} ({a.stage}): {a.status}"
        if a.error:
            line += f" [{a.error_kind}] {a.error[:200]}"
        elif a.answer:
            line += f" -> {a.answer}"
        c.print(line, soft_wrap=True, markup=False)
    if r.error and r.status != "error":  # an error is the stderr line of exit_for
        c.print(r.error, soft_wrap=True, markup=False, style="red")


def exit_for(r: Any) -> None:
    if r.status == "error":
        fail(r.error or "the problem ended in an error")


def show_result(r: Any, as_json: bool) -> None:
    """Print one solve result (JSON or text) and exit non-zero if it ended in an error."""
    if as_json:
        emit_json(r.to_dict())
    else:
        print_result(r)
    exit_for(r)
