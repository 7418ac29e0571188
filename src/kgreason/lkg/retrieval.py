"""Hybrid retrieval and the logical hull (paper section 3.2, eqs. 1-2, prompt A.3).

anchors = (three thresholded vector searches: Rule, Constraint, Entity indices)
          ∪ (exact matches of the query's entities) ∪ (a BM25 pass over names and texts);
hull    = anchors ∪ Rule/Constraint nodes within k hops along MENTIONS, IS_A, APPLIES_TO
          (multi-hop QA, `hull_facts`: ∪ entities within k hops along typed predicate edges);
final   = LLM pruning of the hull (strict JSON list of IDs), when an LLM is given.

Query entities come from the LLM (stage "query_entities") or, without one, from a
deterministic n-gram lookup against the graph's names. When the pruning reply is unusable
the unpruned hull is kept and the error recorded: pruning only shrinks the context.
"""

from __future__ import annotations

import json
import time

from pydantic import BaseModel, Field

from kgreason.lkg.ids import lkg_name_key, normalize_text
from kgreason.lkg.index import LKGIndex
from kgreason.lkg.prompts import load_prompt
from kgreason.lkg.types import Edge, Node
from kgreason.llm.base import ChatLLM, LLMError
from kgreason.llm.parse import ParseError, ask_parsed, extract_json
from kgreason.llm.schema import load_stage_schema

_STOPWORDS = (
    "a an the is are was were be been of in on at to for from by with and or not no if then "
    "that this these those which who whom what when where why how does do did can could "
    "would should must may might will shall it its as than following statement true false "
    "unknown uncertain based above information"
)
_STOP = frozenset(_STOPWORDS.split())


class Premise(BaseModel):
    """One retrieved statement (a node's or fact's raw text) and its passages' titles."""

    text: str
    titles: list[str] = Field(default_factory=list)


class Anchor(BaseModel):
    id: str
    #: every pass that found it: "vector:rule" | "vector:constraint" | "vector:entity" |
    #: "exact" | "bm25"
    sources: list[str]
    #: the best of its scores (cosine; 1.0 for exact; BM25 scaled to at most 0.9)
    score: float


class RetrievedSubgraph(BaseModel):
    query: str
    query_entities: list[str] = Field(default_factory=list)
    anchors: list[Anchor] = Field(default_factory=list)
    #: node ids of the hull, best first (anchor score decayed by hop distance)
    hull: list[str] = Field(default_factory=list)
    #: node ids kept by the LLM pruner (None: no pruning ran)
    pruned: list[str] | None = None
    nodes: list[Node] = Field(default_factory=list)
    #: edges among the kept nodes, plus relation facts touching kept entities
    edges: list[Edge] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    timings_ms: dict[str, float] = Field(default_factory=dict)

    def of_kind(self, *kinds: str) -> list[Node]:
        return [n for n in self.nodes if n.kind in kinds]

    def raw_texts(self) -> list[str]:
        """Unique raw texts in rank order (see `premises`)."""
        return [p.text for p in self.premises()]

    def premises(self) -> list[Premise]:
        """The retrieved premises in rank order: each kept node (best first) with its own
        raw text, followed by the raw texts of the facts touching it, so a fact ranks with
        its best-ranked end. Equal texts are one premise (titles united)."""
        touching: dict[str, list[Edge]] = {}
        for e in self.edges:
            touching.setdefault(e.src, []).append(e)
            touching.setdefault(e.dst, []).append(e)
        out: dict[str, Premise] = {}

        def add(text: str, titles: list[str]) -> None:
            if not text:
                return
            key = normalize_text(text)
            p = out.get(key)
            if p is None:
                out[key] = Premise(text=text, titles=list(titles))
            else:
                p.titles = list(dict.fromkeys([*p.titles, *titles]))

        for n in self.nodes:
            add(n.raw_text, n.titles)
            for e in touching.get(n.id, ()):
                add(e.raw_text, e.titles)
        return list(out.values())

    def titles(self) -> list[str]:
        """Passage titles of the premises, deduplicated in rank order: the retrieved
        documents Recall@k (eq. 3) reads in multi-hop QA."""
        return list(dict.fromkeys(t for p in self.premises() for t in p.titles))


def fallback_entities(index: LKGIndex, query: str, max_n: int = 4) -> list[str]:
    """Names of graph entities/concepts whose normalised form is an n-gram of the query
    (longest first; a shorter n-gram inside an accepted one is skipped)."""
    words = lkg_name_key(query).split()
    found: list[str] = []
    inside: set[str] = set()  # every run of words of an accepted n-gram
    for n in range(max_n, 0, -1):
        for i in range(len(words) - n + 1):
            gram = " ".join(words[i : i + n])
            ids = index.names.get(gram)  # gram is already normalised
            if gram in _STOP or not ids or gram in inside:
                continue
            inside.update(_runs(words[i : i + n]))
            found.append(index.nodes[ids[0]].name)
    return found


def _runs(words: list[str]) -> list[str]:
    """The contiguous word runs of an n-gram: what `f" {gram} " in f" {g} "` finds inside
    it (words hold no spaces). A set of these replaces a scan of every accepted n-gram per
    n-gram of the query (quadratic in a query naming many entities)."""
    return [" ".join(words[a:b]) for a in range(len(words)) for b in range(a + 1, len(words) + 1)]


def _parse_str_list(text: str) -> list[str]:
    data = extract_json(text)
    if isinstance(data, dict) and len(data) == 1:
        data = next(iter(data.values()))
    if not isinstance(data, list) or not all(isinstance(x, (str, int)) for x in data):
        raise ParseError("expected a JSON list of strings")
    return [str(x) for x in data]


class HybridRetriever:
    def __init__(
        self,
        index: LKGIndex,
        *,
        tau: float = 0.5,
        hops: int = 2,
        top_k: int = 10,
        llm: ChatLLM | None = None,
        prune: bool = True,
        max_tokens: int | None = 512,
        max_prune_candidates: int = 100,
        hull_facts: bool = False,
    ):
        self.index, self.tau, self.hops, self.top_k = index, tau, hops, top_k
        self.llm, self.prune, self.max_tokens = llm, prune, max_tokens
        #: the pruning prompt lists at most this many hull nodes (best ranked); the rest are
        #: dropped with a note, so a huge hull cannot overflow the model's context
        self.max_prune_candidates = max_prune_candidates
        #: the hull also walks typed predicate edges to entities (multi-hop QA bridges)
        self.hull_facts = hull_facts

    async def query_entities(self, query: str, notes: list[str]) -> list[str]:
        if self.llm is None:
            return fallback_entities(self.index, query)
        try:
            ents, _ = await ask_parsed(
                self.llm,
                [{"role": "user", "content": load_prompt("query_entities", query=query)}],
                _parse_str_list,
                stage="query_entities",
                reminder="Return ONLY a JSON list of entity names.",
                max_tokens=self.max_tokens,
                schema=load_stage_schema("kgreason.lkg", "query_entities"),
            )
        except LLMError as e:
            notes.append(f"query_entities: {e}; used the deterministic fallback")
            return fallback_entities(self.index, query)
        return [e.strip() for e in ents if e.strip()]

    def anchors(self, query: str, entities: list[str]) -> list[Anchor]:
        idx = self.index
        best: dict[str, Anchor] = {}

        def add(nid: str, source: str, score: float) -> None:
            a = best.setdefault(nid, Anchor(id=nid, sources=[], score=score))
            a.sources.append(source)
            a.score = max(a.score, score)

        if idx.embedder is not None and idx.groups:
            text = query if not entities else f"{query} {' '.join(entities)}"
            qv = idx.embedder.embed([text])[0]
            for group, nid, s in idx.vector_search(qv, self.top_k, self.tau):
                add(nid, f"vector:{group}", s)
        for name in entities:
            for nid in idx.exact(name):
                add(nid, "exact", 1.0)
        hits = idx.bm25_search(" ".join([query, *entities]), self.top_k)
        top = max((s for _, s in hits), default=0.0)
        for nid, s in hits:
            if nid in idx.nodes and top > 0:
                add(nid, "bm25", 0.9 * s / top)
        return sorted(best.values(), key=lambda a: (-a.score, a.id))

    def expand(self, anchors: list[Anchor]) -> list[str]:
        """Anchors ∪ hull logic nodes, ranked by anchor score halved per hop."""
        score = {a.id: a.score for a in anchors}
        hull = self.index.hull([a.id for a in anchors], self.hops, facts=self.hull_facts)
        for nid, (d, src) in hull.items():
            s = score.get(src, 0.0) * 0.5**d
            if s > score.get(nid, -1.0):
                score[nid] = s
        return sorted(score, key=lambda n: (-score[n], n))

    async def prune_nodes(self, query: str, ids: list[str], notes: list[str]) -> list[str] | None:
        if self.llm is None or not self.prune or not ids:
            return None
        if len(ids) > self.max_prune_candidates:
            notes.append(
                f"prune: hull of {len(ids)} nodes cut to the {self.max_prune_candidates} best "
                "ranked before pruning"
            )
            ids = ids[: self.max_prune_candidates]
        alias = {f"n{i + 1}": nid for i, nid in enumerate(ids)}
        cands = [
            {
                "ID": a,
                "Type": self.index.nodes[n].kind.capitalize(),
                "Content": self.index.nodes[n].content(),
            }
            for a, n in alias.items()
        ]
        prompt = load_prompt("prune", query=query, candidates=json.dumps(cands, ensure_ascii=False))
        try:
            kept, _ = await ask_parsed(
                self.llm,
                [{"role": "user", "content": prompt}],
                _parse_str_list,
                stage="prune",
                reminder='Return ONLY a JSON list of node IDs such as ["n1", "n3"].',
                max_tokens=self.max_tokens,
                schema=load_stage_schema("kgreason.lkg", "prune"),
            )
        except LLMError as e:
            notes.append(f"prune: {e}; kept the unpruned hull")
            return None
        unknown = [k for k in kept if k not in alias and k not in ids]
        if unknown:
            notes.append(f"prune: ignored unknown IDs {unknown[:5]}")
        out = [alias.get(k, k) for k in kept if k in alias or k in ids]
        return list(dict.fromkeys(out))

    async def retrieve(self, query: str) -> RetrievedSubgraph:
        t0 = time.perf_counter()
        idx = self.index.refresh()
        notes: list[str] = []
        t1 = time.perf_counter()
        entities = await self.query_entities(query, notes)
        t2 = time.perf_counter()
        anchors = self.anchors(query, entities)
        hull = self.expand(anchors)
        t3 = time.perf_counter()
        pruned = await self.prune_nodes(query, hull, notes)
        t4 = time.perf_counter()
        # the pruner's kept nodes in hull rank order (its reply order carries no rank)
        kept = set(pruned or ())
        keep = hull if pruned is None else [n for n in hull if n in kept]
        keep_set = set(keep)
        # edges among kept nodes, plus the outgoing facts of kept entities (LEFT_OF, HAS...)
        edges: dict[int, Edge] = {}  # keyed by object id: each stored edge is one object
        logic, incident = idx.logic, idx.incident
        for nid in keep:
            entity = nid not in logic
            for e in incident.get(nid, ()):
                if (e.src in keep_set and e.dst in keep_set) or (
                    entity and e.src == nid and e.dst not in logic
                ):
                    edges[id(e)] = e
        return RetrievedSubgraph(
            query=query,
            query_entities=entities,
            anchors=anchors,
            hull=hull,
            pruned=pruned,
            nodes=[idx.nodes[n] for n in keep],
            edges=list(edges.values()),
            notes=notes,
            timings_ms={
                "index": (t1 - t0) * 1e3,
                "query_entities": (t2 - t1) * 1e3,
                "anchors_hull": (t3 - t2) * 1e3,
                "prune": (t4 - t3) * 1e3,
            },
        )
