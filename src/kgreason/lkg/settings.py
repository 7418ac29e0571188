"""SymbolLKG's parameters (paper sections 3-4).

The anchor threshold tau depends on the embedder. The paper names tau_sim (eq. 1) but gives
no value; 0.5 is ours, for BGE-M3-like embedders, whose cosines run high (the paper's
Appendix B log keeps rules at 0.83-0.89); MiniLM's run much lower.
bench/lkg_tau.py measured MiniLM (and its static distillation) on ProntoQA's gold-proof
premises vs its distractors: at 0.5 MiniLM keeps 19.8% of the gold premises (1.5% of the
distractors), at 0.35 30.8% (7.9%) and every question still has a vector anchor; below
0.35 distractors grow faster than gold premises (0.25: 33.7% vs 12.1%). So 0.35 for both;
any other embedder (BGE-M3 included) gets our 0.5. docs/symbollkg.md has the table.

Where the paper fixes a behaviour it is the default and our changes are switches:
`include_context` (the solver prompt sees only G_final, sections 3.4 and A.2),
`repair_unusable` (repairs feed back error messages only, section 3.4). Where the paper is
silent the default is what kgreason did before (`backup_answer = "none"`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

#: our threshold for embedders not measured here (BGE-M3 included): the paper gives none
DEFAULT_TAU = 0.5
#: measured thresholds by embedder name (bench/lkg_tau.py)
MEASURED_TAU: dict[str, float] = {"all-MiniLM-L6-v2": 0.35, "minilm-static": 0.35}


def default_tau(embedder_name: str | None) -> float:
    """The measured tau of an embedder, else our 0.5 (the paper gives no value)."""
    return MEASURED_TAU.get(embedder_name or "", DEFAULT_TAU)


class LKGSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    #: eq. 1's cosine threshold for vector anchors; None (default): the value measured for
    #: the configured embedder (`default_tau`), a number: that value whatever the embedder
    tau: float | None = None
    hull_hops: int = 2
    top_k: int = 10
    max_repairs: int = 3
    #: the solver prompt also shows the raw context beside the retrieved subgraph (ours);
    #: off (the paper, sections 3.4 and A.2): the LLM compiles only the pruned G_final
    include_context: bool = False
    #: also repair a run that executed but gave no usable answer (no unique option,
    #: inconsistent premises, an unusable verdict), with a message saying why (ours);
    #: off (the paper, section 3.4): only error messages of a failed run are fed back
    repair_unusable: bool = False
    #: an unsolved problem's answer: "none" (it counts wrong; the paper is silent, and
    #: this was kgreason's behaviour) or "random" (Logic-LM's protocol: a random option,
    #: seeded by the problem id, recorded as a backup)
    backup_answer: Literal["none", "random"] = "none"
    #: the BM25 anchor pass reads node names only (section 4.3: "a BM25 entity-name pass");
    #: off (ours, the default): every node's name, raw text and description
    bm25_names_only: bool = False
    solver_timeout_s: float = 20.0
    solver_memory_mb: int = 1024
    temperature: float = 0.0
    max_tokens: int = 2048
    #: multi-hop QA (section 4.4): the answer prompt shows the passages beside the retrieved
    #: premises, as the paper appends the subgraph "alongside the raw context"
    qa_include_passages: bool = True
    #: multi-hop QA: also route the question to a solver and show its true/false verdict to
    #: the answer stage (off: the paper's QA pipeline is construction, retrieval, answer)
    qa_solver: bool = False
    #: multi-hop QA: the hull also walks typed predicate edges to entities (bridge entities
    #: of section 4.3); off: eq. 2's hull (rules and constraints only)
    qa_hull_facts: bool = True

    def tau_for(self, embedder_name: str | None) -> float:
        """The tau retrieval uses with this embedder: the configured one, else its default."""
        return self.tau if self.tau is not None else default_tau(embedder_name)
