"""ToG's parameters; the defaults are the ToG paper's (Sun et al., ICLR 2024, section 3 and
its released code): beam width N=3, depth Dmax=3, temperature 0.4 while exploring and 0 while
reasoning, replies of at most 256 tokens."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class ToGSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    #: "tog": LLM-scored relations and entities; "tog-r": ToG-R, relation chains with the
    #: entities sampled at random instead of scored by the LLM (fewer calls)
    variant: Literal["tog", "tog-r"] = "tog"
    #: N: relations kept per entity, and paths kept per depth
    width: int = Field(default=3, ge=1)
    #: Dmax: exploration rounds before answering from the LLM's own knowledge
    depth: int = Field(default=3, ge=1)
    exploration_temperature: float = 0.4
    reasoning_temperature: float = 0.0
    max_tokens: int = 256
    #: ToG's code samples `entities_retained` candidates at random when one relation leads
    #: to at least `sample_threshold` entities (20 and 5 in its released code)
    sample_threshold: int = Field(default=20, ge=1)
    entities_retained: int = Field(default=5, ge=1)
    #: seed of that sampling (and of ToG-R's), mixed with the entity and relation
    seed: int = 0
    #: neighbours read per entity to discover its relations; reaching it is reported
    max_neighbors: int = Field(default=10_000, ge=1)
    #: topic linking (pog/linking.py), as PoG's `link_threshold`
    link_threshold: float = 0.85
    #: relations ToG never offers: "tog" drops its released code's abandoned relations
    #: (kg/settings.TOG_NOISE_PREFIXES: type.object.*, common.*, freebase.*, sameAs), ToG's
    #: paper setting, whatever the KG's own kg.noise_filter (PoG's default there is none);
    #: "none" offers every relation the KG gives
    noise_filter: Literal["none", "tog"] = "tog"

    def temperature(self, stage: str) -> float:
        exploring = stage in ("tog.relation_prune", "tog.entity_score")
        return self.exploration_temperature if exploring else self.reasoning_temperature
