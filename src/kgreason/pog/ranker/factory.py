"""From settings to the FuzzySelector PoG and the LLM-free mode use: plain SBERT similarity,
a trained ranker, or a zero-shot ranking: hop-aligned, or order-aligned (the question's
relation words in the hop order its English implies; see PoGSettings.ranker/fuzzy_stage)."""

from __future__ import annotations

import logging
from importlib import resources
from pathlib import Path
from typing import Literal

from kgreason.embed.base import Embedder
from kgreason.kg.base import KnowledgeGraph
from kgreason.pog.fuzzy import FuzzySelector
from kgreason.pog.ranker.artefact import PathRanker, RankerError, check_kg, load_ranker, read_spec
from kgreason.pog.ranker.selector import RankerSelector
from kgreason.pog.ranker.zeroshot import HopAlignedRanker, OrderAlignedRanker
from kgreason.pog.settings import PoGSettings

log = logging.getLogger(__name__)


#: the zero-shot rankings `pog.ranker` may name (zeroshot.py)
ZERO_SHOT: dict[str, type[HopAlignedRanker] | type[OrderAlignedRanker]] = {
    "hop-aligned": HopAlignedRanker,
    "order-aligned": OrderAlignedRanker,
}


def bundled_ranker_path() -> Path:
    """The ranker trained on MetaQA dev over the bundled KG (see its PROVENANCE.md)."""
    return Path(str(resources.files("kgreason.pog.ranker").joinpath("bundled", "metaqa")))


def kg_relations(kg: KnowledgeGraph) -> list[str]:
    """The KG's relation vocabulary when it is known locally (store, MemoryKG), else []."""
    rels = getattr(kg, "relations", None)
    if isinstance(rels, list):
        return list(rels)
    triples = getattr(kg, "_triples", None)
    return sorted({t.relation for t in triples}) if triples is not None else []


def kg_sources(kg: KnowledgeGraph) -> list[str]:
    """sha256 of the files a store was built from (its manifest), [] for other backends."""
    manifest = getattr(kg, "manifest", None)
    return sorted(str(x.get("sha256", "")) for x in getattr(manifest, "sources", None) or [])


def same_kg(trained: dict, kg: KnowledgeGraph) -> bool:
    """The KG a ranker was trained on: same fingerprint, or a store built from the same
    input files (a store rebuilt by a newer kgreason keeps its content, not its bytes)."""
    if trained.get("fingerprint") == kg.fingerprint():
        return True
    src = kg_sources(kg)
    return bool(src) and all(src) and src == sorted(trained.get("sources_sha256") or [])


#: where `pog.ranker = "auto"` looks for a ranker trained on a store: STORE/ranker
BESIDE = "ranker"


def artefact_beside(kg: KnowledgeGraph) -> tuple[Path, dict] | None:
    """(STORE/ranker, its spec) when it is a ranker artefact trained on this store (what
    `kgreason train ranker --kg STORE --out STORE/ranker` writes), else None. Whether auto
    uses it depends on how it was trained (`build_selector`)."""
    store = getattr(kg, "path", None)
    if not isinstance(store, Path):
        return None
    path = store / BESIDE
    try:
        spec = read_spec(path)
    except RankerError:
        return None
    return (path, spec) if same_kg(spec.get("kg", {}), kg) else None


def is_label_free(spec: dict) -> bool:
    return bool(spec.get("training", {}).get("label_free"))


def load_checked(path: Path, kg: KnowledgeGraph) -> tuple[PathRanker, list[str]]:
    ranker = load_ranker(path)
    fingerprint = (
        ranker.trained_on.get("fingerprint", "")
        if same_kg(ranker.trained_on, kg)
        else kg.fingerprint()
    )
    warnings = check_kg(ranker, getattr(kg, "name", "?"), fingerprint, kg_relations(kg))
    return ranker, warnings


def _mode(settings: PoGSettings, llm_free: bool) -> Literal["learned", "combined"]:
    """The ranker replaces SBERT ("learned") unless PoG asks for both ("combined")."""
    return "combined" if settings.fuzzy_stage == "combined" and not llm_free else "learned"


def build_selector(
    settings: PoGSettings, kg: KnowledgeGraph, embedder: Embedder, *, llm_free: bool
) -> tuple[FuzzySelector | None, list[str]]:
    """(selector or None for PoG's default FuzzySelector, warnings to show the user)."""
    choice = settings.ranker
    if not llm_free and settings.fuzzy_stage == "sbert":
        return None, []
    if choice == "none":
        if not llm_free:
            raise RankerError(f"pog.fuzzy_stage={settings.fuzzy_stage!r} needs pog.ranker")
        return None, []
    if choice in ZERO_SHOT:
        if llm_free:  # the same ranking, words and answers as auto on an unfamiliar KG
            return unfamiliar_kg_selector(settings, embedder, ZERO_SHOT[choice]), []
        zs = ZERO_SHOT[choice](embedder)
        mode = _mode(settings, llm_free)
        return RankerSelector(
            zs,
            embedder,
            mode=mode,
            answers=False,
            prefilter_top=settings.fuzzy_prefilter,
            zero_shot=True,
        ), []
    if choice == "auto":
        # A ranker trained beside the store on question-answer pairs of this KG, else the
        # bundled one on its own KG, else the zero-shot ranking. A label-free ranker beside
        # the store is passed over: on every KG with real questions to check (PathQuestion's
        # four, the company KG) it answered fewer right than the zero-shot ranking
        # (docs/ranker.md); `pog.ranker = STORE/ranker` still uses it.
        path = bundled_ranker_path()
        try:
            spec = read_spec(path)
        except RankerError:
            return None, []
        beside = artefact_beside(kg)
        if not same_kg(spec.get("kg", {}), kg) and beside and not is_label_free(beside[1]):
            path, spec = beside
        if not same_kg(spec.get("kg", {}), kg):
            if not llm_free:
                raise RankerError(
                    f"pog.fuzzy_stage={settings.fuzzy_stage!r}: the bundled ranker was trained "
                    f"on the bundled KG; pass a ranker trained on {getattr(kg, 'name', '?')}"
                )
            zero_shot = unfamiliar_kg_selector(settings, embedder)
            zero_shot.passed_over = beside[0] if beside and is_label_free(beside[1]) else None
            return zero_shot, []
    else:
        path = Path(choice).expanduser()
    ranker, warnings = load_checked(path, kg)
    mode = _mode(settings, llm_free)
    return RankerSelector(
        ranker, embedder, mode=mode, prefilter_top=settings.fuzzy_prefilter
    ), warnings


def unfamiliar_kg_selector(
    settings: PoGSettings,
    embedder: Embedder,
    ranking: type[HopAlignedRanker] | type[OrderAlignedRanker] = OrderAlignedRanker,
) -> RankerSelector:
    """`pog.ranker = auto` on a KG no ranker was trained on (the LLM-free mode): the
    zero-shot order-aligned ranking, which ranked best across the KGs left out of training
    (docs/ranker.md, bench/ranker_loko.py), and answers with its top path (abstaining when
    that path's relations do not match the question: pog.llm_free_abstain_below, a
    threshold set with static vectors). It reads words with the vendored static model
    whatever the pipeline embeds with: MiniLM scored within 2 points of it on PathQuestion
    at 20-400x the time per question. A zero-shot ranking named in pog.ranker gets the
    same treatment (`ranking`)."""
    from kgreason.embed.static import StaticEmbedder

    inner = getattr(embedder, "inner", embedder)
    words = embedder if isinstance(inner, StaticEmbedder) else StaticEmbedder()
    return RankerSelector(
        ranking(words),
        words,  # the static model's whole-path similarity prefilters a hub's many paths
        mode="learned",
        answers=True,
        prefilter_top=settings.fuzzy_prefilter,
        zero_shot=True,
    )


def describe_ranker(
    settings: PoGSettings, kg: KnowledgeGraph, fuzzy: FuzzySelector
) -> dict[str, str]:
    """Which ranking ordered the LLM-free mode's paths, and why that one: every answer says
    it (the trace's llm-free record; the CLI prints it)."""
    ranker = getattr(fuzzy, "ranker", None)
    choice = settings.ranker
    if isinstance(ranker, PathRanker):
        training = ranker.spec.get("training", {})
        on_this = same_kg(ranker.trained_on, kg)
        where = "this KG" if on_this else f"another KG ({ranker.trained_on.get('name', '?')})"
        if is_label_free(ranker.spec):
            kind = f"label-free, trained on {where}"
        elif choice == "auto" and on_this and ranker.source == bundled_ranker_path():
            kind = f"bundled, trained on {training.get('dataset', '?')} question-answer pairs"
        else:
            kind = f"trained on {training.get('dataset', '?')} question-answer pairs over {where}"
        if choice != "auto":
            why = f"pog.ranker = {choice}"
        elif ranker.source is not None and ranker.source.name == BESIDE and on_this:
            why = f"pog.ranker = auto: the ranker beside the store ({ranker.source})"
        else:
            why = "pog.ranker = auto, and this is the KG the bundled ranker was trained on"
        return {"ranker": kind, "why": why}
    if isinstance(ranker, HopAlignedRanker):
        return {"ranker": "zero-shot hop-aligned", "why": "pog.ranker = hop-aligned"}
    if isinstance(ranker, OrderAlignedRanker):
        if choice == "auto":
            free = getattr(fuzzy, "passed_over", None)
            if free is not None:
                why = (
                    f"pog.ranker = auto: the ranker beside the store ({free}) was trained "
                    "without labels, and label-free rankers answered fewer questions right "
                    "than order-aligned on every KG measured (docs/ranker.md); "
                    f"`--ranker {free}` uses it"
                )
            else:
                why = (
                    "pog.ranker = auto: no ranker was trained on this KG's question-answer "
                    "pairs, and order-aligned ranks best on KGs no ranker was trained on "
                    "(docs/ranker.md); one trained on this KG's questions and saved beside "
                    "the store (`kgreason train ranker --kg STORE --data ... --out "
                    "STORE/ranker`) is used instead"
                )
            return {"ranker": "zero-shot order-aligned", "why": why}
        return {"ranker": "zero-shot order-aligned", "why": "pog.ranker = order-aligned"}
    if choice == "auto":
        why = (
            "pog.ranker = auto: the bundled ranker was trained on another KG, and no "
            "ranker was trained on this one"
        )
    else:
        why = f"pog.ranker = {choice}"
    return {"ranker": "none: whole-path similarity", "why": why}
