"""PoG's parameters; the defaults are the paper's (sections 4-5, Appendix C).

The default pruning strategy is section 5's "PoG setting": Fuzzy + Precise Path Selection
with W1 = 80 (Algorithm 2's second case), the setting of the headline results (Table 1, the
per-entity-count Table 2, and the "PoG" rows of Tables 6 and 8). The 3-step beam search
(W2 = 20) is one of the Table 4/5 ablations: about 1.6 (CWQ) and 2.0 (WebQSP) points less
accurate with about half the pruning tokens. See docs/fidelity.md.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

#: default of PoGSettings.max_level_rows (pog/paths.py uses it as its own default)
MAX_LEVEL_ROWS = 5_000_000


class PoGSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    w_max: int = 3
    d_max: int = 3
    w1: int = 80
    w2: int = 20
    exploration_temperature: float = 0.4
    reasoning_temperature: float = 0.0
    max_tokens: int = 256
    #: a pruning strategy (pog/pruning.py), one of Algorithm 2's cases: "fuzzy-precise"
    #: (Fuzzy + Precise Path Selection, the paper's PoG setting and the default),
    #: "three-step" (Fuzzy + Branch Reduced + Precise, the "3-Step Beam Search" ablation),
    #: "fuzzy" (Fuzzy Selection Only), "fuzzy-branch" (Fuzzy + Branch Reduced); the earlier
    #: names "precise"/"branch" are aliases, recorded as the name they stand for. Or one
    #: registered in the `PruningStrategies` passed to `PoG(..., strategies=...)`.
    strategy: str = "fuzzy-precise"
    #: BranchReduceSelect (the "fuzzy-branch" and "three-step" strategies): "per-entity"
    #: selects each list entity's branches apart, at most W each (section 4.3's prose, the
    #: default); "union" makes one selection of W over every entity's branches together
    #: (fewer selector calls; one entity's branches may crowd out the others'). pog/branch.py.
    branch_selection: Literal["per-entity", "union"] = "per-entity"
    #: section 4.4 / Table 6: the path summary REPLACES the raw paths in the sufficiency,
    #: answer and final-answer prompts; False is the "w/o Path Summarizing" ablation (raw
    #: paths, no summarise call).
    summary: bool = True
    #: how the `{Yes}`/`{No}` sufficiency reply is read (pog/answering.py): "anywhere" (the
    #: paper: Algorithm 1 tests `"{Yes}" in Answer`, so a `{Yes}` anywhere means sufficient)
    #: or "first" (the first verdict in the reply wins, the reading before issue 35)
    sufficiency_verdict: Literal["anywhere", "first"] = "anywhere"
    #: entity sets in LLM prompts: the paper writes every member ({e_0x, ..., e_0z},
    #: Appendix E), so no member cap by default (None); an int shows at most that many
    #: members and "... (+N more)". Each set is also bounded by a token budget (about 4
    #: characters a token): `set_tokens` in the prompts that judge and answer from at most
    #: W_max paths (summarise, evaluate, answer, final answer, supplement), where a hidden
    #: member can be the answer; `select_set_tokens` in PrecisePathSelect's prompts of up to
    #: 40 paths, which choose by relations and would otherwise outgrow a context window
    #: (PoG's released code shows 20 members everywhere). Every cut is reported in the
    #: result's `bounds_hit`.
    set_items: int | None = None
    set_tokens: int = 1000
    select_set_tokens: int = 200
    variant: Literal["pog", "pog-e"] = "pog"
    seed: int = 0
    #: Bounds that keep a question tractable; hitting one is reported in the result.
    #: None (or "none" in a file, the environment, `eval --max-subgraph-triples`) = no cap,
    #: the paper's setting (section 4.1 fetches the whole D_max-hop neighbourhood): the cap
    #: is ours, so that a hub question stays answerable; how often it cuts is in every
    #: eval run's bounds figures (docs/eval.md).
    max_subgraph_triples: int | None = Field(default=200_000, ge=1)
    max_paths: int = 20_000
    #: fuzzy ranking with a transformer embedder (MiniLM, sentence-transformers) of more paths
    #: than this (and than the W asked for): the vendored static model ranks them first and
    #: only this many of its best are embedded by the transformer (pog/fuzzy.py). MiniLM
    #: costs 15-30 ms a path on a CPU: a hub question's 20,000 paths took over 5 minutes.
    #: An approximation, reported in `bounds_hit`: among ~12k pooled MetaQA paths, 512 kept
    #: 33 % of MiniLM's own top 80 and its top path for 126/200 questions (1,024: 46 %,
    #: 152/200; among 2.3k: 64 %, 38/40; bench/fuzzy_prefilter.py), at 20-40 ms a long path
    #: text: a 20,000-path question takes ~20 s instead of over 5 minutes. 0 = embed every
    #: path (the paper's way). MetaQA's questions have at most ~120 paths: never cut.
    #: With `fuzzy_stage = "combined"` the path ranker keeps its own best this many instead.
    fuzzy_prefilter: int = Field(default=512, ge=0)
    #: a path-search level whose partial paths would read more edge rows than this (their
    #: sets' degrees summed) is not searched; shorter lengths are kept and the cut is
    #: reported (pog/paths.py). 5M: no MetaQA search reads more than 84k rows in all, no
    #: synthetic 10M single-topic level more than 2.4M; two-topic levels reached 60M+.
    #: None = unbounded.
    max_level_rows: int | None = Field(default=MAX_LEVEL_ROWS, ge=1)
    #: single-topic path search (pog/paths.py): a step that the exclusions (never the topic
    #: again, no immediate backtracking) leave empty reaches what they excluded instead of
    #: being dropped. PathQuestion's gold chains revisit the topic ("the child of [X]'s
    #: parent" when X is the only child: X -> P -> X), which the exclusions made unfindable
    #: for about half of PQ-3H (zero-shot Hits@1 70.3 -> 89.0, docs/ranker.md). "auto": on
    #: for a zero-shot ranking in the LLM-free mode; off for a trained ranker (it learned
    #: on candidates without revisits: the bundled one lost 0.3 on MetaQA with them) and
    #: for PoG's own exploration (the paper's paths). `revisits()` resolves it.
    revisit_when_empty: Literal["auto", "on", "off"] = "auto"
    #: how `max_subgraph_triples` cuts a local store's subgraph (docs/scale.md, "The
    #: subgraph bound"): "edge-order" takes edges in discovery order and stops at the cap
    #: (the default, and the only rule for SPARQL/in-memory KGs); "relation-aware" shares a
    #: cut hop's budget across relation paths from the topic (PoG's supernodes), so none
    #: disappears and hub groups are truncated first. Not the default: on the synthetic
    #: 1M/10M questions it kept the gold answers no more often and cost 6-12x the time.
    subgraph_bound: Literal["edge-order", "relation-aware"] = "edge-order"
    #: LLM-free mode with one topic entity only: with no predicted depth, a path's fuzzy score
    #: is lowered by this much per hop beyond the first (an Occam prior between near-equal paths). 0.02 was chosen on the
    #: first 150 MetaQA dev questions per hop: candidate Hits@1 rose for 1-, 2- and 3-hop with
    #: both embedders (e.g. static 62->82, 38->39, 27->30 %); 0 restores pure similarity order.
    llm_free_length_penalty: float = 0.02
    #: LLM-free mode with a ranker: abstain ("no confident answer") when the top path's
    #: word-to-hop alignment (ranker/align.py `path_alignment`) is below this; 0 never
    #: abstains. 0.13: the highest threshold at which at most 4% of a calibration slice of
    #: 450 held-out MetaQA dev questions abstains (bench/abstention.py --per-hop 150); on
    #: another 450 it abstains on 2.0%, and on 92% of 50 out-of-KG questions.
    llm_free_abstain_below: float = 0.13
    #: LLM-free mode with a zero-shot ranking (pog.ranker = auto on an unfamiliar KG): also
    #: abstain when its calibrated confidence (ranker/calibration.py) is below this; 0 never.
    #: 0.30: the highest on a 0.05 grid at which at most 5% of the right answers of a choose
    #: slice (PathQuestion 600-700 per file, MetaQA dev 4300-4400 per hop) abstain, with the
    #: alignment rule beside it (bench/zero_shot_calibration.py); the figures on other
    #: questions are in docs/ranker.md.
    llm_free_confidence_below: float = 0.30
    #: Path ranker (pog/ranker): "auto" = the ranker shipped with the bundled KG when the
    #: KG is the one it was trained on, a ranker trained beside the store on question-
    #: answer pairs (a label-free one there is passed over: it ranked below order-aligned
    #: on every KG measured), else the zero-shot "order-aligned" ranking; "none"
    #: (similarity candidates, no answer); "hop-aligned" or "order-aligned" (zero-shot, no
    #: training; in the LLM-free mode they answer, labelled zero-shot); or the directory of
    #: a ranker artefact (`kgreason train ranker`).
    ranker: str = "auto"
    #: PoG's FuzzySelect with an LLM: "sbert" (the paper), "learned" (the ranker instead of
    #: SBERT) or "combined" (both, z-scored). The LLM-free mode uses the ranker whenever one
    #: is configured.
    fuzzy_stage: Literal["sbert", "learned", "combined"] = "sbert"
    #: topic linking: a mention that matches no name exactly (after normalisation) links to
    #: the closest name only when their similarity (rapidfuzz ratio, 0..1) reaches this;
    #: below it the question ends with an unknown-entity error offering suggestions.
    #: "Once Were Warrior" -> "Once Were Warriors" is 0.97; "Nonexistent FC" ->
    #: "Newcastle United FC" is 0.61.
    link_threshold: float = 0.85

    #: members of each set, and triples of each hop, that a result shows (pog/evidence.py:
    #: the most relevant first, with the full sizes beside them); None shows all
    #: (`kgreason ask --full`)
    result_members: int | None = Field(default=50, ge=1)
    result_triples: int | None = Field(default=100, ge=1)

    @field_validator("strategy")
    @classmethod
    def _strategy_name(cls, v: str) -> str:
        """A name only: the `PruningStrategies` the pipeline is built with checks it (and
        resolves an alias) when `PoG` is made (settings are data; registries the
        pipeline's)."""
        if not re.fullmatch(r"\w[\w.-]{0,63}", v):
            raise ValueError(f"not a pruning strategy name: {v[:80]!r}")
        return v

    @field_validator("revisit_when_empty", mode="before")
    @classmethod
    def _on_off(cls, v: object) -> object:
        """true / false (TOML booleans, flags) are on / off."""
        return {True: "on", False: "off"}.get(v, v) if isinstance(v, bool) else v

    def revisits(self, zero_shot: bool = False) -> bool:
        """Whether the single-topic search revisits (revisit_when_empty) for a pipeline
        ranking with a zero-shot ranking or not."""
        if self.revisit_when_empty == "auto":
            return zero_shot
        return self.revisit_when_empty == "on"

    @field_validator("max_subgraph_triples", mode="before")
    @classmethod
    def _none_word(cls, v: object) -> object:
        """The word none is no cap: TOML has no null, and a flag or variable is text."""
        return None if isinstance(v, str) and v.strip().lower() == "none" else v

    @field_validator("set_items", "set_tokens", "select_set_tokens")
    @classmethod
    def _positive(cls, v: int | None) -> int | None:
        if v is not None and v < 1:
            raise ValueError("must be at least 1")
        return v
