"""The logic router (paper section 3.3, prompt A.4): pick Z3, Prover9 or the Horn engine.

A deterministic structural router reads the retrieved subgraph (typed constraints, rule
count, numbers) and the question's answer form; it decides alone when no LLM is configured
and checks the LLM's choice otherwise. Disagreement is recorded, not hidden. One choice is
overridden: only the Z3 route can pick among free-text options, so an LLM choosing another
engine for a statement-option question is switched to Z3 (and the override recorded).

The structural rules pick among the three built-in engines; the LLM may also name any
solver registered in the `SolverRegistry` it is given (words and labels come from there).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from kgreason.lkg.options import OptionsKind, options_kind
from kgreason.lkg.prompts import load_prompt
from kgreason.lkg.retrieval import RetrievedSubgraph
from kgreason.lkg.solvers.registry import SolverRegistry, default_solvers
from kgreason.llm.base import ChatLLM, LLMError
from kgreason.llm.parse import ParseError, ask_parsed
from kgreason.llm.schema import choice_schema

#: A registered solver's name; the structural router returns one of the built-in three.
Route = str
BUILTIN_ROUTES: tuple[str, ...] = ("z3", "prover9", "horn")
#: kept for callers that list the built-in routes
ROUTES = BUILTIN_ROUTES

_NUMBER = re.compile(r"(?<![A-Za-z_])\d+(?:\.\d+)?")
_FO_HINTS = re.compile(
    r"\b(either|or|neither|nor|not all|some|no one|none|exists|unless|if and only if)\b|[∃∨⊕↔¬]",
    re.I,
)


class RouteFeatures(BaseModel):
    constraint_types: dict[str, int] = Field(default_factory=dict)
    rule_count: int = 0
    entity_count: int = 0
    numbers_present: bool = False
    options_kind: OptionsKind = "none"
    three_valued: bool = False
    first_order_hints: bool = False


def features(sub: RetrievedSubgraph, question: str, options: Sequence[str] | None) -> RouteFeatures:
    logic = sub.of_kind("rule", "constraint")
    texts = [f"{n.raw_text} {n.expression}" for n in logic]
    kind = options_kind(options)
    q = question.lower()
    return RouteFeatures(
        constraint_types=dict(Counter(n.type for n in sub.of_kind("constraint"))),
        rule_count=len(sub.of_kind("rule")),
        entity_count=len(sub.of_kind("entity", "concept")),
        numbers_present=any(_NUMBER.search(t) for t in texts),
        options_kind=kind,
        three_valued=kind == "tfu" or "unknown" in q or "uncertain" in q,
        first_order_hints=any(_FO_HINTS.search(t) for t in texts),
    )


def structural_route(f: RouteFeatures) -> tuple[Route, str]:
    """The decision rules, in order; the reason names the rule that fired."""
    if f.options_kind == "statements":
        return "z3", "multiple-choice question with statement options"
    typed = {t: c for t, c in f.constraint_types.items() if t != "Generic" and c}
    if typed:
        return "z3", f"typed constraints {sorted(typed)}"
    if f.numbers_present:
        return "z3", "numbers in the retrieved rules/constraints"
    if f.three_valued:
        return "prover9", "three-valued (true/false/unknown) question"
    if f.first_order_hints:
        return "prover9", "disjunction, negation or quantifiers in the rules"
    if f.options_kind == "tf":
        return "horn", "closed true/false question (Horn rules, closed world)"
    if f.rule_count:
        return "horn", "if-then rules and no sign of first-order structure"
    return "prover9", "default: first-order entailment"


class RouteDecision(BaseModel):
    route: Route
    #: "structural" (no LLM), "llm", "llm_fallback" (unusable reply), "override"
    source: str
    structural: Route
    structural_reason: str
    llm_choice: Route | None = None
    disagreement: bool = False
    note: str = ""
    features: RouteFeatures


def parse_route(text: str, solvers: SolverRegistry | None = None) -> Route:
    """The one solver a router reply names, by the registry's route words."""
    words = (solvers or default_solvers()).route_words()
    alts = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
    found = {words[w] for w in re.findall(rf"\b({alts})\b", text.upper())}
    if len(found) != 1:
        raise ParseError(f"expected exactly one of {', '.join(_shown_words(words))}")
    return found.pop()


def _shown_words(words: dict[str, str]) -> list[str]:
    """One word per solver (the first registered), as the prompt lists them."""
    seen: dict[str, str] = {}
    for w, name in words.items():
        seen.setdefault(name, w)
    return list(seen.values())


def _extra_engines(solvers: SolverRegistry) -> str:
    """Prompt lines for registered solvers beyond the built-in three (none: the paper's
    prompt unchanged)."""
    extra = [s for s in solvers if s.name not in BUILTIN_ROUTES]
    if not extra:
        return ""
    lines = [f"- {s.route_words[0].upper()}: {s.label}" for s in extra]
    return "\nOther engines you may return instead:\n" + "\n".join(lines) + "\n"


async def route(
    llm: ChatLLM | None,
    sub: RetrievedSubgraph,
    question: str,
    options: Sequence[str] | None = None,
    *,
    max_tokens: int | None = 16,
    solvers: SolverRegistry | None = None,
) -> RouteDecision:
    solvers = solvers or default_solvers()
    f = features(sub, question, options)
    s_route, reason = structural_route(f)
    base: dict[str, Any] = {"structural": s_route, "structural_reason": reason, "features": f}
    if llm is None:
        return RouteDecision(route=s_route, source="structural", **base)
    rules = sub.of_kind("rule")
    example = (rules[0].description or rules[0].raw_text) if rules else "None"
    prompt = load_prompt(
        "route",
        query=question,
        options=json.dumps(list(options or []), ensure_ascii=False),
        constraint_types=json.dumps(sorted(f.constraint_types)),
        rule_count=str(f.rule_count),
        rule_example=example,
        entity_count=str(f.entity_count),
        numbers="yes" if f.numbers_present else "no",
    )
    prompt += _extra_engines(solvers)
    shown = " OR ".join(_shown_words(solvers.route_words()))
    try:
        choice, _ = await ask_parsed(
            llm,
            [{"role": "user", "content": prompt}],
            lambda text: parse_route(text, solvers),
            stage="route",
            reminder=f"Return ONLY one word: {shown}.",
            max_tokens=max_tokens,
            schema=choice_schema("route", _shown_words(solvers.route_words()), "route"),
        )
    except LLMError as e:
        return RouteDecision(
            route=s_route, source="llm_fallback", note=f"route: {e}; used the structural router",
            **base,
        )  # fmt: skip
    dis = choice != s_route
    if f.options_kind == "statements" and choice != "z3":
        return RouteDecision(
            route="z3", source="override", llm_choice=choice, disagreement=dis,
            note=f"LLM chose {choice}, but only the Z3 route answers statement options",
            **base,
        )  # fmt: skip
    return RouteDecision(route=choice, source="llm", llm_choice=choice, disagreement=dis, **base)
