"""`kgreason ask "QUESTION"`: PoG on the bundled KG (or --kg DIR / --sparql URL), with the
reasoning paths rendered readably. With no LLM configured it runs PoG's LLM-free mode and
says so: the output is then retrieval candidates, never PoG's answer."""

from __future__ import annotations

import asyncio
from typing import Any

import typer
from rich.panel import Panel

from kgreason.cli import common
from kgreason.cli.common import console, emit_json, err_console, fail, settings, want_json
from kgreason.cli.embedder_option import EmbedderOption, embedder_override
from kgreason.config import Settings
from kgreason.embed.errors import EmbedderError
from kgreason.kg.base import KGError, KnowledgeGraph
from kgreason.llm.base import LLMError
from kgreason.llm.usage import Budget
from kgreason.pog.pipeline import PoG
from kgreason.pog.pruning import default_strategies
from kgreason.pog.render import render_path
from kgreason.pog.types import PoGResult, TopicEntity


def _label(name: str, id_: str | None) -> str:
    return f"{name} ({id_})" if id_ and id_ != name else name


def link_line(t: TopicEntity) -> str:
    """`linked "Once Were Warrior" -> "Once Were Warriors" (0.97, fuzzy)`: mention -> entity
    (the id too when it differs from the name), score and linking method."""
    target = f'"{t.name}"' + (f" [{t.id}]" if t.id != t.name else "")
    mention = t.keyword or t.id
    return f'linked "{mention}" -> {target} ({t.score:.2f}, {t.method})'


def result_dict(result: PoGResult) -> dict[str, Any]:
    data = result.to_dict()
    label = result.label
    if label is not None:
        data["label"] = label
    return data


def _build(s: Settings) -> tuple[KnowledgeGraph, PoG]:
    from kgreason.embed.factory import build_embedder
    from kgreason.kg.open import open_kg
    from kgreason.llm.factory import build_llm, llm_configured

    try:
        kg = open_kg(s.kg)
    except KGError as e:
        fail(f"knowledge graph: {e}")
    try:
        embedder = build_embedder(s.embed)
    except EmbedderError as e:
        fail(f"embedder: {e}")
    try:
        llm = build_llm(s.llm) if llm_configured(s.llm) else None
    except LLMError as e:
        fail(f"LLM: {e}")
    budget = Budget(s.llm.max_calls_per_question, s.llm.max_tokens_per_question)
    return kg, PoG(kg, llm, embedder, s.pog, budget=budget, fuzzy=_ranker(s, kg, embedder, llm))


def _ranker(s: Settings, kg: KnowledgeGraph, embedder: Any, llm: Any) -> Any:
    """The path ranker's selector (pog.ranker / --ranker), or None for plain FuzzySelect."""
    from kgreason.pog.ranker.artefact import RankerError
    from kgreason.pog.ranker.factory import build_selector

    try:
        fuzzy, warnings = build_selector(s.pog, kg, embedder, llm_free=llm is None)
    except (RankerError, EmbedderError) as e:
        fail(f"ranker: {e}")
    for w in warnings:
        err_console().print(f"[yellow]warning[/]: {w}", soft_wrap=True)
    return fuzzy


async def _run(
    kg: KnowledgeGraph, pog: PoG, question: str, topics: list[str] | None
) -> tuple[PoGResult, dict[str, str]]:
    try:
        result = await pog.ask_async(question, topics)
        ids = {e for p in result.paths for e in p.entities()}
        try:
            names = await kg.names(sorted(ids)) if ids else {}
        except KGError:
            names = {}
    finally:
        await kg.aclose()  # SPARQL endpoints hold an HTTP client, stores memory maps
    return result, names


def subgraph_line(result: PoGResult) -> str:
    """`Subgraph: N entities / M triples`, then the reduced sizes, or why nothing was cut:
    graph reduction (pog/reduction.py) keeps what lies on paths between topic entities,
    so with one topic the neighbourhood is kept whole, as it is when no two connect."""
    st = result.subgraph
    line = f"Subgraph: {st.entities} entities / {st.triples} triples"
    if (st.reduced_entities, st.reduced_triples) != (st.entities, st.triples):
        return f"{line} -> reduced {st.reduced_entities} entities / {st.reduced_triples} triples"
    note = result.trace_record("graph").get("reduction", "")
    if len(result.topic_entities) < 2 or note.startswith("fewer than two"):
        why = (
            "graph reduction keeps the paths joining two or more topic entities; with one, "
            "its neighbourhood is kept whole"
        )
    elif note.startswith("topic entities not connected"):
        why = note.split(":")[0]  # "topic entities not connected within N hops"
    else:
        why = "every entity lies on a path between the topic entities"
    return f"{line} (not reduced: {why})"


def print_result(result: PoGResult, names: dict[str, str]) -> None:
    out = console()
    if result.mode == "llm-free" and result.answers:
        from kgreason.cli.ranker_output import print_ranker_answer

        print_ranker_answer(out, result)
    elif result.mode == "llm-free":
        out.print(Panel(f"[bold yellow]{result.label}[/]", expand=False))
        from kgreason.cli.ranker_output import print_ranker_line

        print_ranker_line(out, result)
        if result.abstained:
            from kgreason.pog.labels import JOIN_NOTE, LOW_CONFIDENCE_NOTE, NO_CONFIDENT_ANSWER

            why = result.trace_record("ranker")
            reason = (
                "the top path joins several topic entities; a zero-shot ranking "
                "cannot tell which entity on it is asked for"
                if why.get("note") == JOIN_NOTE
                else f"the zero-shot ranking's calibrated confidence {why.get('confidence', 0):.2f} "
                f"is below {why.get('confidence_below', 0):.2f}"
                if why.get("note") == LOW_CONFIDENCE_NOTE
                else f"the top path's relations match the question's words at "
                f"{why.get('alignment', 0):.2f}, below {why.get('abstain_below', 0):.2f}: "
                "the KG may not hold this answer"
            )
            out.print(f"[bold red]Answer[/]: {NO_CONFIDENT_ANSWER} ({reason})")
        cands = ", ".join(_label(c.name, c.id) for c in result.candidates[:20])
        out.print(f"[bold]Candidates[/] (ranked): {cands or '(none)'}")
    else:
        answers = ", ".join(_label(a.name, a.id) for a in result.answers)
        out.print(f"[bold green]Answer[/]: {answers or '(none)'}")
        out.print(f"Phase: {result.phase or '-'}   Mode: {result.mode}")
    links = [link_line(t) for t in result.topic_entities]
    out.print("Topic entities:" if links else "Topic entities: -", highlight=False)
    for line in links:
        out.print(f"  {line}", highlight=False, markup=False, soft_wrap=True)
    if result.analysis:
        out.print(f"Indicator: {result.analysis.indicator}")
    out.print(subgraph_line(result), markup=False, soft_wrap=True)
    out.print("[bold]Reasoning paths[/]:" if result.paths else "Reasoning paths: (none)")
    for i, p in enumerate(result.paths, 1):
        out.print(f"  {i}. {render_path(p, names)}", soft_wrap=True)
    if result.unverified_triples:
        out.print(f"[bold red]Unverified triples[/]: {result.unverified_triples}")
    for b in result.bounds_hit:
        out.print(f"[yellow]bound hit[/]: {b}")
    total = result.usage.get("total", {})
    if total:
        out.print(
            f"LLM: {total.get('calls', 0)} calls ({total.get('paper_calls', 0)} as the PoG "
            f"paper counts), {total.get('prompt_tokens', 0)} prompt + "
            f"{total.get('completion_tokens', 0)} completion tokens; "
            f"{result.timings_s.get('total', 0.0):.2f}s"
        )


def warn_ignored_flags(s: Settings, given: dict[str, bool]) -> None:
    """One stderr line naming the flags given that the LLM-free mode does not read (pruning
    strategy, variant, summaries are LLM stages), instead of ignoring them silently."""
    from kgreason.llm.factory import llm_configured

    ignored = [flag for flag, on in given.items() if on]
    if ignored and not llm_configured(s.llm):
        verb = "has" if len(ignored) == 1 else "have"
        err_console().print(
            f"[yellow]warning[/]: {', '.join(ignored)} {verb} no effect in LLM-free mode "
            "(no LLM configured)",
            soft_wrap=True,
        )


def show_ask_result(result: PoGResult, names: dict[str, str], as_json: bool) -> None:
    """Print a result, or end with one error line. A failed question prints nothing on
    stdout in text mode unless it got as far as reasoning paths (kept, as computed
    results are); --json always prints the result, whose `ok`/`error` say what happened."""
    if result.error_kind == "unknown-entity" and not as_json:
        fail(result.error or "unknown entity")  # the error names the mention, with suggestions
    if as_json:
        emit_json(result_dict(result))
    elif result.ok or result.paths:
        print_result(result, names)
    if not result.ok:
        fail(f"{result.error_kind}: {result.error}")


def register(app: typer.Typer) -> None:
    @app.command("ask")
    def ask_command(
        ctx: typer.Context,
        question: str = typer.Argument(..., help="The question, in natural language."),
        kg: str | None = typer.Option(
            None, "--kg", help="KG store directory (default: the bundled MetaQA KG)."
        ),
        sparql: str | None = typer.Option(None, "--sparql", help="SPARQL endpoint URL."),
        dialect: str | None = typer.Option(None, help="freebase | wikidata | generic"),
        topic: list[str] | None = typer.Option(
            None, "--topic", help="Topic entity id or name (repeatable); skips extraction."
        ),
        strategy: str | None = typer.Option(
            None, help="Path pruning: " + " | ".join(default_strategies().names())
        ),
        variant: str | None = typer.Option(None, help="pog | pog-e"),
        no_summary: bool = typer.Option(
            False, "--no-summary", help="No path summaries: raw paths in the answering prompts."
        ),
        ranker: str | None = typer.Option(
            None,
            "--ranker",
            help="Path ranker: auto | none | hop-aligned | order-aligned | artefact DIR.",
        ),
        embedder: EmbedderOption = None,
        full: bool = typer.Option(
            False,
            "--full",
            help="Every member and triple of each path's sets (default: the first "
            "pog.result_members / pog.result_triples, with the full counts).",
        ),
        json_out: common.JsonOption = False,
    ) -> None:
        """Answer a question with Paths-over-Graph and show the reasoning paths."""
        overrides = {
            "kg.store": kg,
            "kg.sparql_url": sparql,
            "kg.dialect": dialect,
            "pog.strategy": strategy,
            "pog.variant": variant,
            "pog.summary": False if no_summary else None,
            "pog.ranker": ranker,
            **embedder_override(embedder),
        }
        s = settings(ctx, **overrides).settings
        if full:  # None is "not given" among the overrides: whole sets are set here
            whole = {"result_members": None, "result_triples": None}
            s = s.model_copy(update={"pog": s.pog.model_copy(update=whole)})
        if not question.strip():
            fail("the question is empty")
        given = {"--strategy": strategy is not None, "--variant": variant is not None}
        warn_ignored_flags(s, {**given, "--no-summary": no_summary})
        kg_obj, pog = _build(s)
        try:
            result, names = asyncio.run(_run(kg_obj, pog, question, topic or None))
        except (KGError, LLMError) as e:  # anything the pipeline did not already name
            fail(f"{type(e).__name__}: {e}")
        show_ask_result(result, names, want_json(ctx, json_out))
