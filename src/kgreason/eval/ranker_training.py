"""One training run end to end (what `kgreason train ranker` does): KG, questions, weak
supervision (or its cache), template split, training, artefact with provenance."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from kgreason.config import Settings
from kgreason.eval.ranker_data import RankerDataError, load_questions, template_split
from kgreason.eval.trained import training_source, write_questions
from kgreason.llm.base import ChatLLM
from kgreason.pog.ranker.artefact import save_ranker
from kgreason.pog.ranker.supervision import (
    WHOLE_GRAPH_MAX_TRIPLES,
    SupervisedSet,
    TrainQuestion,
    all_triples,
    supervise,
)
from kgreason.pog.ranker.train import TrainConfig, train

#: the embedder the ranker's features use: the vendored static model (fast, always present)
EMBEDDER: dict[str, Any] = {"backend": "static"}

Tick = Callable[[str, int, int], None]

#: `--data` for label-free training: questions generated from the KG itself
GENERATED = "generated"
#: generated questions per hop count when no limit is given
GENERATED_PER_HOP = 1500
#: question/relation projection for label-free training: generated questions name their
#: relations literally, and a 24-dim bilinear part learns those literal words rather than
#: how questions ask; 6 dims transferred best to real PathQuestion questions (chosen ON
#: PathQuestion, bench/ranker_transfer.py: 2H 32.7 -> 37.3, 3H 39.3 -> 47.3, PQL-2H 46.3 ->
#: 56.7, PQL-3H 31.7 -> 46.0 Hits@1 at 24 -> 6; 10 was worse on PQL-3H)
GENERATED_PCA_DIM = 6


@dataclass
class TrainRequest:
    data: str
    split: str
    hops: tuple[int, ...]
    limit: int | None
    data_dir: Path | None
    out: Path
    kinds: tuple[str, ...] = ("linear", "mlp")
    epochs: int = 6
    seed: int = 0
    valid_fraction: float = 0.2
    supervision: Path | None = None
    #: label-free only: have the LLM reword the generated questions (pog/ranker/paraphrase.py)
    paraphrase: bool = False


async def generated_questions(
    kg: Any, req: TrainRequest, tick: Tick, llm: ChatLLM | None = None
) -> tuple[list[TrainQuestion], dict[str, Any]]:
    """Label-free: questions generated from the KG's own triples (pog/ranker/synth.py),
    reworded by `llm` when `req.paraphrase` (pog/ranker/paraphrase.py)."""
    from kgreason.pog.ranker import synth

    triples = all_triples(kg)
    if triples is None:
        raise RankerDataError(
            f"label-free training reads the whole KG, and {kg.name} is not a local store or "
            f"TSV of at most {WHOLE_GRAPH_MAX_TRIPLES:,} triples; pass --data with "
            "question-answer pairs instead"
        )
    cfg = synth.SynthConfig(per_hop=req.limit or GENERATED_PER_HOP, hops=req.hops, seed=req.seed)
    sampled = synth.sample(triples, cfg, progress=lambda d, t: tick("generating questions", d, t))
    if not sampled:
        raise RankerDataError(f"{kg.name}: no relation walk to generate questions from")
    names = await kg.names(list(dict.fromkeys(e for x in sampled for e in x.ids)))
    generated: dict[str, Any] = {
        "per_hop": cfg.per_hop,
        "hops": list(cfg.hops),
        "two_topic": cfg.two_topic,
        "max_answers": cfg.max_answers,
        "seed": cfg.seed,
    }
    questions = synth.questions(sampled, names, req.seed)
    if req.paraphrase:
        from kgreason.pog.ranker.paraphrase import paraphrase

        if llm is None:
            raise RankerDataError(
                "--paraphrase needs an LLM (set OPENAI_BASE_URL / OPENAI_API_KEY)"
            )
        questions, done = await paraphrase(
            llm, questions, progress=lambda d, t: tick("paraphrasing questions", d, t)
        )
        generated["paraphrased"] = done.to_dict()
    return questions, {"label_free": True, "generated": generated}


async def labelled_set(
    s: Settings, req: TrainRequest, tick: Tick, llm: ChatLLM | None = None
) -> SupervisedSet:
    from kgreason.kg.open import open_kg

    cache = req.supervision
    if cache is not None and Path(str(cache).removesuffix(".npz") + ".npz").is_file():
        return SupervisedSet.load(cache)
    kg = open_kg(s.kg)
    dropped: list[str] = []
    about: dict[str, Any] = {"label_free": False}
    if req.paraphrase and req.data != GENERATED:
        raise RankerDataError(f"--paraphrase rewords generated questions, not --data {req.data}")
    if req.data == GENERATED:
        questions, about = await generated_questions(kg, req, tick, llm)
        skipped = 0
    else:
        questions, skipped = await load_questions(
            kg,
            req.data,
            split=req.split,
            hops=req.hops,
            data_dir=req.data_dir,
            limit=req.limit,
            dropped=dropped,
        )
    if not questions:
        raise RankerDataError(f"no {req.data} question has a topic entity in {kg.name}")
    n = len(questions)
    sup = await supervise(kg, questions, s.pog, progress=lambda k: tick("labelling paths", k, n))
    sup.meta.update(skipped=skipped, data=req.data, split=req.split, hops=list(req.hops))
    sup.meta.update(about)
    sup.meta["dropped"] = dropped  # texts, for the artefact's training_questions.json
    sup.meta["relations"] = _relations(kg)
    from kgreason.pog.ranker.factory import kg_sources

    sup.meta["sources_sha256"] = kg_sources(kg)
    if cache is not None:
        sup.save(cache)
    return sup


def _relations(kg: Any) -> list[str]:
    from kgreason.pog.ranker.factory import kg_relations

    return kg_relations(kg)


async def run_training(
    s: Settings, req: TrainRequest, tick: Tick, llm: ChatLLM | None = None
) -> dict[str, Any]:
    """`llm`: only for `req.paraphrase`."""
    from kgreason.embed import build_embedder
    from kgreason.embed.settings import EmbedSettings

    sup = await labelled_set(s, req, tick, llm)
    embedder = build_embedder(EmbedSettings(**EMBEDDER))
    tr, va = template_split(sup.questions, valid_fraction=req.valid_fraction, seed=req.seed)
    cfg = TrainConfig(kinds=req.kinds, epochs=req.epochs, seed=req.seed)
    # what the labelled set holds decides, not --data: a --supervision cache of MetaQA
    # pairs trains as MetaQA whatever the default says
    parts = sup.meta.get("parts", [sup.meta])
    label_free = any(p.get("label_free") for p in parts)
    dataset = str(parts[0].get("data") or req.data) if parts else req.data
    if label_free:
        cfg.pca_dim = GENERATED_PCA_DIM
    res = train(sup, embedder, cfg, tr, va, progress=lambda k, d, t: tick(f"training {k}", d, t))
    training = {
        "dataset": dataset,
        "label_free": label_free,
        **({"generated": parts[0]["generated"]} if parts and parts[0].get("generated") else {}),
        "split": None if label_free else (parts[0].get("split") if parts else None) or req.split,
        "hops": list(parts[0].get("hops") or req.hops) if parts else list(req.hops),
        "limit_per_hop": req.limit,
        "questions": len(sup),
        "skipped": sum(int(p.get("skipped", 0)) for p in parts),
        "with_positive_path": res.n_positive,
        "train_questions": len(tr),
        "valid_questions": len(va),
        "fingerprint": sup.fingerprint(),
        "seed": req.seed,
        "config": asdict(cfg),
        "train_s": {k: round(v, 1) for k, v in res.train_s.items()},
        "history": res.history,
    }
    relations = next((p["relations"] for p in parts if p.get("relations")), sup.vocab)
    sources: list[str] = next((p["sources_sha256"] for p in parts if p.get("sources_sha256")), [])
    meta = {
        "embedder": EMBEDDER,
        "kg": {
            "name": sup.kg_name,
            "fingerprint": sup.kg_fingerprint,
            "relations": relations,
            "sources_sha256": sources,
        },
        "training": training,
        "validation": res.valid,
        "chosen_by": "validation Hits@1 (all hops)",
    }
    path = save_ranker(req.out, res.scorer, res.proj, meta, res.scalars)
    # which questions it saw, so `kgreason eval` can leave them out (eval/trained.py)
    texts = [q.text for q in sup.questions]
    dropped = [t for p in parts for t in p.get("dropped", [])]
    write_questions(
        path,
        texts,
        fingerprint=sup.fingerprint(),
        source=training_source(training),
        dropped=dropped,
    )
    return {
        "path": str(path),
        "model": {"kind": res.kind, "n_params": res.scorer.n_params()},
        "training": training,
        "validation": res.valid,
    }
