"""PoG's initialisation, graph side: subgraph detection -> clustering -> reduction, timed.

This is what both the LLM pipeline and the LLM-free mode run before exploring paths.

API:
    await prepare_graph(kg, topic_ids, settings, *, reduce_max_len=None,
                        keep_self_loops=False) -> PreparedGraph
        .graph       the reduced clustered graph (search paths here: G_q)
        .clustered   the clustered graph before reduction
        .stats       SubgraphStats (sizes before/after, clustered edges, truncation)
        .bounds_hit  named bounds that were hit;  .timings_s  per stage
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from kgreason.kg.base import KnowledgeGraph
from kgreason.kg.inverses import fold_inverse_triples, known_inverses
from kgreason.kg.store.kg import StoreKG
from kgreason.pog.arrays.build import from_store
from kgreason.pog.clustering import ClusteredGraph
from kgreason.pog.reduction import Reduction, reduce_graph
from kgreason.pog.settings import PoGSettings
from kgreason.pog.subgraph import QuestionSubgraph, detect_subgraph, walk_subgraph
from kgreason.pog.types import SubgraphStats


@dataclass
class PreparedGraph:
    topics: tuple[str, ...]
    subgraph: QuestionSubgraph
    clustered: ClusteredGraph
    reduction: Reduction
    stats: SubgraphStats
    bounds_hit: list[str] = field(default_factory=list)
    timings_s: dict[str, float] = field(default_factory=dict)

    @property
    def graph(self) -> ClusteredGraph:
        return self.reduction.graph


async def prepare_graph(
    kg: KnowledgeGraph,
    topic_ids: Sequence[str],
    settings: PoGSettings,
    *,
    reduce_max_len: int | None = None,
    keep_self_loops: bool = False,
) -> PreparedGraph:
    """`reduce_max_len` defaults to |Topic| * D_max (see reduction.py). `keep_self_loops`:
    keep the subgraph's self-loops (a KG keyed by names states facts such as (Believe,
    tracks, Believe)). Callers pass whether the question's search revisits
    (PoGSettings.revisits): the chains that read them are PathQuestion's, and off, the graph
    stays the one PoG's exploration and trained rankers know (pog/clustering.py)."""
    topics = tuple(dict.fromkeys(topic_ids))
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    # a local store with plain PoG takes the integer-array path (pog/arrays/graph.py): same
    # graph, no Triple objects; PoG-E's per-pair sampling and remote KGs keep the generic one
    store = kg if isinstance(kg, StoreKG) and settings.variant == "pog" else None
    if store is not None:
        sub, walk = walk_subgraph(store, topics, settings)
    else:
        sub = await detect_subgraph(kg, topics, settings)
    t1 = time.perf_counter()
    timings["subgraph"] = t1 - t0
    # an explicit inverse edge (r_inverse, owl:inverseOf, exact mirror) beside its mirror is
    # the same fact: one hop, not two parallel edges (kgreason.kg.inverses)
    clustered: ClusteredGraph
    fast_graph = None
    if store is not None:
        inv = known_inverses(kg)
        clustered = fast_graph = from_store(
            store, walk.eids, topics, inv, rows=walk.rows, keep_self_loops=keep_self_loops
        )
    else:
        clustered = ClusteredGraph.from_triples(
            fold_inverse_triples(sub.triples, known_inverses(kg)),
            variant=settings.variant,
            seed=settings.seed,
            isolated=topics,
            keep_self_loops=keep_self_loops,
        )
    t2 = time.perf_counter()
    timings["clustering"] = t2 - t1
    max_len = reduce_max_len if reduce_max_len is not None else len(topics) * settings.d_max
    red = reduce_graph(clustered, topics, max_len=max_len)
    timings["reduction"] = time.perf_counter() - t2
    stats = SubgraphStats(
        triples=len(sub.triples),
        entities=(
            fast_graph.subgraph_entities(topics) if fast_graph is not None else len(sub.entities())
        ),
        reduced_triples=red.triples_after,
        reduced_entities=red.entities_after,
        clustered_edges=red.graph.clustered_edge_count(),
        truncated=sub.truncated,
        truncation_reason=sub.truncation_reason,
    )
    return PreparedGraph(topics, sub, clustered, red, stats, sub.bounds_hit(), timings)
