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
