"""A synthetic movie KG whose relation names say nothing ("p1".."p4"), with questions in four
phrasings per relation: only a ranker that LEARNS how questions map to relations can answer.
Shared by the ranker tests."""

from __future__ import annotations

from kgreason.kg.base import Triple
from kgreason.kg.memory import MemoryKG
from kgreason.pog.ranker.supervision import TrainQuestion

RELATIONS = {"director": "p1", "year": "p2", "genre": "p3", "actor": "p4"}
TEMPLATES = {
    "director": [
        "who directed [{f}]",
        "who is the director of [{f}]",
        "[{f}] was directed by whom",
        "which person directed the film [{f}]",
    ],
    "year": [
        "when was [{f}] released",
        "what year did [{f}] come out",
        "[{f}] was released in which year",
        "in what year was the film [{f}] released",
    ],
    "genre": [
        "what genre is [{f}]",
        "which genre does [{f}] belong to",
        "[{f}] is a film of which genre",
        "what is the genre of the film [{f}]",
    ],
    "actor": [
        "who acted in [{f}]",
        "who starred in [{f}]",
        "[{f}] starred which actors",
        "which actors acted in the film [{f}]",
    ],
}
N_FILMS = 40


def synth_triples() -> list[Triple]:
    out = []
    for i in range(N_FILMS):
        f = f"film{i}"
        out += [
            Triple(f, "p1", f"director{i % 9}"),
            Triple(f, "p2", f"year{1990 + i % 11}"),
            Triple(f, "p3", f"genre{i % 5}"),
            Triple(f, "p4", f"actor{i % 13}"),
            Triple(f, "p4", f"actor{(i + 5) % 13}"),
        ]
    return out


def synth_kg(name: str = "synth") -> MemoryKG:
    return MemoryKG(synth_triples(), name=name)


def synth_questions() -> list[tuple[TrainQuestion, int]]:
    """(question, template number 0-3) for every film, relation and phrasing."""
    by_film: dict[str, dict[str, list[str]]] = {}
    for t in synth_triples():
        by_film.setdefault(t.head, {}).setdefault(t.relation, []).append(t.tail)
    out = []
    for i in range(N_FILMS):
        f = f"film{i}"
        for kind, templates in TEMPLATES.items():
            gold = tuple(sorted(by_film[f][RELATIONS[kind]]))
            for n, tpl in enumerate(templates):
                q = TrainQuestion(f"{f}-{kind}-{n}", tpl.format(f=f), (f,), (f,), gold, 1)
                out.append((q, n))
    return out


def train_synth(out, *, epochs: int = 8, order: bool = True):
    """Train on phrasings 0-2 of the synthetic questions, validate on phrasing 3, and save the
    artefact to `out` (static embedder, PCA 10: the synthetic set has 16 distinct phrasings);
    with the order-aware feature unless `order` is False. Returns (kg, SupervisedSet, valid
    idx, TrainResult)."""
    import asyncio

    from kgreason.embed import build_embedder
    from kgreason.embed.settings import EmbedSettings
    from kgreason.pog.ranker.artefact import save_ranker
    from kgreason.pog.ranker.supervision import supervise
    from kgreason.pog.ranker.train import TrainConfig, train
    from kgreason.pog.settings import PoGSettings

    kg = synth_kg()
    pairs = synth_questions()
    sup = asyncio.run(supervise(kg, [q for q, _ in pairs], PoGSettings()))
    tr = [i for i, (_, n) in enumerate(pairs) if n < 3]
    va = [i for i, (_, n) in enumerate(pairs) if n == 3]  # the fourth phrasing: never seen
    cfg = TrainConfig(epochs=epochs, pca_dim=10, hidden=32, k=32, seed=0, order=order)
    res = train(sup, build_embedder(EmbedSettings(backend="static")), cfg, tr, va)
    meta = {
        "embedder": {"backend": "static"},
        "kg": {"name": kg.name, "fingerprint": kg.fingerprint(), "relations": ["p1", "p2"]},
        "validation": res.valid,
    }
    save_ranker(out, res.scorer, res.proj, meta, res.scalars)
    return kg, sup, va, res
