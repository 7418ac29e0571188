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
