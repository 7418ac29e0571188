"""SymbolLKG on multi-hop QA (paper sections 4.3-4.4): build the LKG from a question's
passages, keeping each passage's title on the nodes and facts it yields; retrieve the
logical hull for the question; answer in free text from the retrieved premises.

The retrieved premises, mapped to their passages' titles and deduplicated in rank order,
are what Recall@2/5 (eq. 3) scores against the supporting titles; the answer is what EM/F1
(eqs. 4-5) score. One passage whose extraction stays unreadable is recorded and skipped
(the others still make the graph); a transport error or an exhausted budget ends the
question with `status="error"`, keeping what was retrieved.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from kgreason.lkg.answering import AnswerGenerator
from kgreason.lkg.codegen import Attempt, ProgramGenerator
from kgreason.lkg.construction import LKGBuilder
from kgreason.lkg.retrieval import Premise, RetrievedSubgraph
from kgreason.lkg.router import RouteDecision, route
from kgreason.lkg.storage import LKGStore
from kgreason.llm.base import ChatLLM, LLMError, LLMOutputError
from kgreason.llm.usage import UsageLedger
from kgreason.result import ResultBase, llm_error_kind
from kgreason.tracing import Tracer

if TYPE_CHECKING:
    from kgreason.lkg.pipeline import SymbolLKG


class QAResult(ResultBase, BaseModel):
    """One multi-hop question's outcome; `to_dict()`/`ok`/`trace` as SolveResult's."""

    id: str | None = None
    question: str
    #: the free-text answer (None when none was produced)
    answer: str | None = None
    raw_answer: str = ""
    status: Literal["answered", "error"] = "error"
    error_kind: str | None = None
    error: str | None = None
    #: retrieved premises, best first, each with its passages' titles
    premises: list[Premise] = Field(default_factory=list)
    #: passage titles of the premises, deduplicated in rank order (what Recall@k reads)
    titles: list[str] = Field(default_factory=list)
    subgraph: RetrievedSubgraph | None = None
    #: with `lkg.qa_solver`: the route, the solver's True/False/Unknown and the attempts
    route: RouteDecision | None = None
    solver_answer: str | None = None
    attempts: list[Attempt] = Field(default_factory=list)
    lkg_counts: dict[str, int] = Field(default_factory=dict)
    lkg_rejected: list[str] = Field(default_factory=list)
    usage: dict = Field(default_factory=dict)
    timings_s: dict[str, float] = Field(default_factory=dict)
    trace: list[dict[str, Any]] = Field(default_factory=list)


async def build_passage_store(
    builder: LKGBuilder, passages: Sequence[tuple[str, str]], question: str, res: QAResult
) -> LKGStore:
    """One extraction per passage (titled), all in one in-memory store; each passage is a
    document whose source is its title. Unreadable passages go to `res.lkg_rejected`."""
    store = LKGStore()
    for title, text in passages:
        try:
            g = await builder.extract(text, question, title=title)
        except LLMOutputError as e:
            res.lkg_rejected.append(f"passage {title!r}: {e}")
            continue
        store.add_document(f"{title}\n{text}", g, source=title)
        res.lkg_rejected += [f"passage {title!r}: {r}" for r in g.rejected]
    return store


def solver_note(decision: RouteDecision, answer: str | None) -> str:
    verdict = answer if answer is not None else "no verdict"
    return (
        f"A symbolic solver ({decision.route}) checked the question as a true/false "
        f"statement over the premises: {verdict}."
    )


async def answer_passages(
    lkg: SymbolLKG,
    llm: ChatLLM,
    ledger: UsageLedger,
    passages: Sequence[tuple[str, str]],
    question: str,
    *,
    id: str | None = None,
) -> QAResult:
    """Construction per passage, hybrid retrieval, (optionally a solver), the answer."""
    s = lkg.settings
    res = QAResult(id=id, question=question)
    tr = Tracer("lkg", lkg.callbacks, ledger=ledger)
    store: LKGStore | None = None
    try:
        with tr.stage("construct") as st:
            builder = LKGBuilder(llm, temperature=s.temperature, max_tokens=s.max_tokens)
            store = await build_passage_store(builder, passages, question, res)
            res.lkg_counts = store.counts()
            st.size(**res.lkg_counts, rejected=len(res.lkg_rejected))
        with tr.stage("retrieve") as st:
            retriever = lkg.retriever(store, llm, hull_facts=s.qa_hull_facts)
            sub = await retriever.retrieve(question)
            res.subgraph, res.premises, res.titles = sub, sub.premises(), sub.titles()
            st.size(nodes=len(sub.nodes), premises=len(res.premises), titles=len(res.titles))
        note = ""
        if s.qa_solver:
            note = await _solve(lkg, llm, sub, question, passages, res, tr)
        with tr.stage("answer") as st:
            gen = AnswerGenerator(
                llm, include_passages=s.qa_include_passages,
                temperature=s.temperature, max_tokens=s.max_tokens,
            )  # fmt: skip
            res.answer, res.raw_answer = await gen.answer(question, res.premises, passages, note)
            st.note(answer=res.answer)
        res.status, res.error_kind = "answered", None
    except LLMError as e:
        res.status, res.error = "error", f"{type(e).__name__}: {e}"
        res.error_kind = llm_error_kind(e) or "llm-error"
    finally:
        if store is not None:
            store.close()
    res.usage = ledger.to_dict()
    res.timings_s = {k: round(v, 4) for k, v in tr.timings_s.items()}
    res.trace = tr.trace
    return res


async def _solve(
    lkg: SymbolLKG,
    llm: ChatLLM,
    sub: RetrievedSubgraph,
    question: str,
    passages: Sequence[tuple[str, str]],
    res: QAResult,
    tr: Tracer,
) -> str:
    """Route and run a solver program on the question (as a true/false statement); the
    note the answer stage sees."""
    s = lkg.settings
    with tr.stage("route") as st:
        res.route = await route(llm, sub, question, None, solvers=lkg.executor.solvers)
        st.note(route=res.route.route)
    with tr.stage("codegen") as st:
        gen = ProgramGenerator(
            llm, lkg.executor, max_repairs=s.max_repairs,
            temperature=s.temperature, max_tokens=s.max_tokens,
            repair_unusable=s.repair_unusable,
        )  # fmt: skip
        # the raw passages only with `lkg.include_context` (the paper: G_final alone)
        context = "\n\n".join(f"{t}: {x}" for t, x in passages) if lkg.include_context else ""
        out = await gen.generate(res.route.route, question, None, sub, context)
        res.attempts, res.solver_answer = out.attempts, out.answer
        st.size(attempts=len(out.attempts), answer=out.answer)
    return solver_note(res.route, res.solver_answer)
