"""Typed outputs of the MCP tools, and their construction from the service's result dicts.

The MCP client (usually an LLM agent) reads these, so they are compact: a result's paths are
capped and each path carries a one-line rendering beside its hops. The full result stays
available through `explain_answer` and, for people, through `kgreason ask --json`."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

import kgreason

#: triples shown per hop; the hop says how many it had
HOP_TRIPLES = 20


class EntityRef(BaseModel):
    id: str
    name: str


class TripleOut(BaseModel):
    head: str
    relation: str
    tail: str


class HopOut(BaseModel):
    relation: str
    forward: bool = Field(description="True when the hop follows the relation head -> tail")
    src: list[str]
    dst: list[str]
    src_total: int = Field(description="Members of the src set in full (src: the first ones)")
    dst_total: int = Field(description="Members of the dst set in full (dst: the first ones)")
    triples: list[TripleOut]
    triples_total: int


class PathOut(BaseModel):
    text: str = Field(description="The path on one line: `A -relation-> B <-relation- C`")
    hops: list[HopOut]


class TopicOut(BaseModel):
    id: str
    name: str
    mention: str = Field(description="The question text it was linked from")
    score: float
    method: str


class AskOutput(BaseModel):
    result_id: str = Field(description="Pass to explain_answer to see the cited triples")
    question: str
    mode: str = Field(description="'llm-free' or the PoG variant that answered")
    llm_free: bool
    label: str | None = Field(description="What the answers are; set in LLM-free mode")
    answers: list[EntityRef]
    candidates: list[EntityRef] = Field(description="LLM-free ranked candidates (top 20)")
    abstained: bool = Field(
        False,
        description="LLM-free: no confident answer (answers empty; the best are candidates)",
    )
    topic_entities: list[TopicOut]
    paths: list[PathOut]
    paths_total: int
    entity_names: dict[str, str] = Field(
        description="Names of the entity ids on the returned paths, where they differ"
    )
    unverified_triples: list[TripleOut] = Field(
        description="Triples the answer cited that the KG does not contain"
    )
    usage: dict[str, Any] = Field(description="LLM calls and tokens per stage")
    elapsed_ms: float | None


class AttemptOut(BaseModel):
    stage: str = Field(description="codegen | repair | program")
    route: str
    status: str
    error_kind: str | None = None
    error: str | None = None


class SolveOutput(BaseModel):
    question: str
    status: str = Field(description="solved | unsolved | error, or the raw program's status")
    verdict: str | None = Field(description="Option letter, True/False/Unknown, or sat/unsat")
    answer: str | None
    route: str | None = Field(description="The solver route taken (z3, prover9, horn, ...)")
    program: str | None = Field(description="The program that produced the verdict")
    proof: Any = Field(description="The solver's proof, when it gave one")
    model: Any = Field(description="The solver's model or values, when it gave one")
    attempts: list[AttemptOut] = Field(description="Each program tried and the solver's message")
    usage: dict[str, Any]


class ExplainTriple(TripleOut):
    verified: bool = Field(description="True when the KG contains this exact triple")


class ExplainOutput(BaseModel):
    result_id: str
    question: str
    mode: str
    llm_free: bool
    answers: list[EntityRef]
    triples: list[ExplainTriple] = Field(description="Answer triples first, up to `limit`")
    triples_total: int
    verified: int = Field(description="Of all the cited triples, how many the KG contains")
    unverified: int


class SearchOutput(BaseModel):
    items: list[EntityMatchOut]


class EntityMatchOut(BaseModel):
    id: str
    name: str
    score: float
    kind: str = Field(description="How the name matched: exact, normalized, prefix or fuzzy")


class NeighbourOut(BaseModel):
    relation: str
    direction: Literal["out", "in"]
    id: str
    name: str


class NeighboursOutput(BaseModel):
    id: str
    name: str
    neighbours: list[NeighbourOut]
    total: int
    next_offset: int | None


SearchOutput.model_rebuild()


def _entities(items: Any) -> list[EntityRef]:
    return [EntityRef(id=str(e["id"]), name=str(e.get("name", e["id"]))) for e in items or ()]


def _triple(t: Any) -> TripleOut:
    if isinstance(t, dict):
        return TripleOut(head=str(t["head"]), relation=str(t["relation"]), tail=str(t["tail"]))
    head, relation, tail = t  # a (head, relation, tail) sequence
    return TripleOut(head=str(head), relation=str(relation), tail=str(tail))


def _folded(names: list[str], total: int | None = None) -> str:
    total = len(names) if total is None else total
    if total == 1 and names:
        return names[0]
    more = f", ... ({total:,} in all)" if total > 5 else ""
    return "{" + ", ".join(names[:5]) + more + "}"


def path_text(hops: list[dict[str, Any]], names: dict[str, str] | None = None) -> str:
    """`Once Were Warriors -directed_by-> Lee Tamahori`; a backward hop is `<-relation-`.
    Entities show by name where `names` knows them (Freebase ids say nothing to a reader)."""
    if not hops:
        return ""
    names = names or {}

    def _set(h: dict[str, Any], key: str) -> str:
        return _folded([names.get(i, i) for i in h[key]], _total(h, key))

    parts = [_set(hops[0], "src")]
    for h in hops:
        arrow = f"-{h['relation']}->" if h.get("forward", True) else f"<-{h['relation']}-"
        parts += [arrow, _set(h, "dst")]
    return " ".join(parts)


def _total(hop: dict[str, Any], key: str) -> int:
    """A hop's full count of `key` (a result's hop holds the first ones and the count)."""
    total = hop.get(f"{key}_total")
    return int(total) if total is not None else len(hop.get(key, ()))


def path_out(path: dict[str, Any], names: dict[str, str] | None = None) -> PathOut:
    hops = list(path.get("hops", ()))
    return PathOut(
        text=path_text(hops, names),
        hops=[
            HopOut(
                relation=str(h["relation"]),
                forward=bool(h.get("forward", True)),
                src=[str(s) for s in h["src"]],
                dst=[str(d) for d in h["dst"]],
                src_total=_total(h, "src"),
                dst_total=_total(h, "dst"),
                triples=[_triple(t) for t in h.get("triples", ())[:HOP_TRIPLES]],
                triples_total=_total(h, "triples"),
            )
            for h in hops
        ],
    )


def ask_output(result: dict[str, Any], result_id: str, max_paths: int) -> AskOutput:
    llm_free = result.get("mode") == "llm-free"
    paths = list(result.get("paths") or ())
    shown = paths[:max_paths]
    all_names: dict[str, str] = result.get("entity_names") or {}
    on_paths = {e for p in shown for h in p.get("hops", ()) for e in (*h["src"], *h["dst"])}
    names = {i: n for i, n in all_names.items() if i in on_paths}
    return AskOutput(
        result_id=result_id,
        question=str(result.get("question", "")),
        mode=str(result.get("mode", "")),
        llm_free=llm_free,
        # the service's label (as the CLI and HTTP say it); a dict without one: similarity
        label=str(result.get("label") or kgreason.SIMILARITY_LABEL) if llm_free else None,
        answers=_entities(result.get("answers")),
        candidates=_entities((result.get("candidates") or [])[:20]),
        abstained=bool(result.get("abstained")),
        topic_entities=[
            TopicOut(
                id=str(t["id"]),
                name=str(t.get("name", t["id"])),
                mention=str(t.get("keyword") or t["id"]),
                score=float(t.get("score", 1.0)),
                method=str(t.get("method", "")),
            )
            for t in result.get("topic_entities") or ()
        ],
        paths=[path_out(p, names) for p in shown],
        paths_total=len(paths),
        entity_names={i: n for i, n in names.items() if n != i},
        unverified_triples=[_triple(t) for t in result.get("unverified_triples") or ()],
        usage=dict(result.get("usage") or {}),
        elapsed_ms=result.get("elapsed_ms"),
    )


def solve_output(result: dict[str, Any]) -> SolveOutput:
    """From SymbolLKG's result, or from a raw program run (`kgreason.lkg.programs`), whose
    `solver` is a name and whose proof and model sit at the top level."""
    solver = result.get("solver")
    last: dict[str, Any] = solver if isinstance(solver, dict) else {}
    route = result.get("route")
    route_name = route.get("route") if isinstance(route, dict) else route
    runs = result.get("results") or []
    program = result.get("program") or (runs[-1].get("program") if runs else None)
    attempts = [
        AttemptOut(
            stage=str(a.get("stage", "codegen")),
            route=str(a.get("route", "")),
            status=str(a.get("status", "")),
            error_kind=a.get("error_kind"),
            error=a.get("error"),
        )
        for a in result.get("attempts") or ()
    ] or [
        AttemptOut(
            stage="program",
            route=str(r.get("solver", route_name or "")),
            status=str(r.get("status", "")),
            error_kind=r.get("error_kind"),
            error=r.get("error"),
        )
        for r in runs
    ]
    return SolveOutput(
        question=str(result.get("question") or ""),
        status=str(result.get("status", "error")),
        verdict=result.get("verdict"),
        answer=result.get("answer"),
        route=route_name,
        program=program,
        proof=result.get("proof", last.get("proof")),
        model=result.get("model", last.get("model") or last.get("values")),
        attempts=attempts,
        usage=dict(result.get("usage") or {}),
    )


def explain_output(
    rid: str, result: dict[str, Any], explained: dict[str, Any], limit: int
) -> ExplainOutput:
    """The service's checked triples, those touching an answer first, cut to `limit`."""
    triples = [ExplainTriple.model_validate(t) for t in explained.get("triples", ())]
    answers = _entities(result.get("answers"))
    ids = {a.id for a in answers}
    triples.sort(key=lambda t: t.head not in ids and t.tail not in ids)  # stable
    ok = sum(t.verified for t in triples)
    return ExplainOutput(
        result_id=rid,
        question=str(result.get("question", "")),
        mode=str(result.get("mode", "")),
        llm_free=result.get("mode") == "llm-free",
        answers=answers,
        triples=triples[:limit],
        triples_total=len(triples),
        verified=ok,
        unverified=len(triples) - ok,
    )
