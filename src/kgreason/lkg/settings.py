"""SymbolLKG's parameters (paper sections 3-4)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class LKGSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tau: float = 0.5
    hull_hops: int = 2
    top_k: int = 10
    max_repairs: int = 3
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
