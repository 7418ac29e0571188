"""Weak supervision: candidate paths from the graph side, labelled by set F1 vs gold."""

from __future__ import annotations

import asyncio

import numpy as np
from tests.pog.ranker_synth import synth_kg, synth_questions

from kgreason.eval.ranker_data import template_split
from kgreason.kg.memory import MemoryKG
from kgreason.pog.ranker.supervision import (
    SupervisedSet,
    TrainQuestion,
    answer_set,
    concat_sets,
    set_f1,
    supervise,
)
from kgreason.pog.settings import PoGSettings
from kgreason.pog.types import Hop, ReasoningPath


def _sup(kg, qs) -> SupervisedSet:
    return asyncio.run(supervise(kg, qs, PoGSettings()))


def test_labels_on_a_tiny_kg():
    kg = MemoryKG(
        [
            ("Heat", "directed_by", "Michael Mann"),
            ("Heat", "release_year", "1995"),
            ("Collateral", "directed_by", "Michael Mann"),
            ("Collateral", "release_year", "2004"),
        ]
    )
    q = TrainQuestion("q1", "who directed [Heat]", ("Heat",), ("Heat",), ("Michael Mann",), 1)
    sup = _sup(kg, [q])
    keys = {}
    for j in range(len(sup.f1)):
        rels = tuple(sup.vocab[r] if r >= 0 else "" for r in sup.rel[j])
        keys[(rels, tuple(sup.sign[j]))] = j
    direct = keys[(("directed_by", "", ""), (1.0, 0.0, 0.0))]
    year = keys[(("release_year", "", ""), (1.0, 0.0, 0.0))]
    assert sup.f1[direct] == 1.0 and sup.hit[direct] and sup.first_hit[direct]
    assert sup.f1[year] == 0.0 and not sup.hit[year] and not sup.first_hit[year]
    # Heat -> directed_by -> Mann <- directed_by <- Collateral -> release_year -> 2004
    assert len(sup.f1) > 2 and sup.positive().tolist() == [True]
    # the topic entity itself is never an answer (paths that return to it are excluded)
    assert sup.f1.max() == 1.0


def test_partial_answer_sets_get_partial_f1():
    assert set_f1(frozenset({"a", "b"}), {"a"}) == (2 * 0.5 * 1 / 1.5, True)
    assert set_f1(frozenset({"c"}), {"a"}) == (0.0, False)


def test_answer_set_of_a_path_joining_two_topics_is_its_inner_entities():
    p = ReasoningPath(
        (
            Hop(("A",), "r", ("M1", "M2"), True),
            Hop(("M1", "M2"), "s", ("B",), False),
        ),
        ("A", "B"),
    )
    assert answer_set(p, ["A", "B"]) == ("M1", "M2")
    single = ReasoningPath((Hop(("A",), "r", ("M1", "A"), True),), ("A",))
    assert answer_set(single, ["A"]) == ("M1",)


def test_every_synthetic_question_has_a_positive_path_and_sets_round_trip(tmp_path):
    qs = [q for q, _ in synth_questions()][:40]
    sup = _sup(synth_kg(), qs)
    assert sup.positive().all()
    sup.save(tmp_path / "sup")
    back = SupervisedSet.load(tmp_path / "sup.npz")
    assert back.fingerprint() == sup.fingerprint()
    assert np.array_equal(back.f1, sup.f1) and back.vocab == sup.vocab
    both = concat_sets([sup, back])
    assert len(both) == 2 * len(sup) and both.offsets[-1] == 2 * sup.offsets[-1]
    assert np.array_equal(both.f1[: len(sup.f1)], both.f1[len(sup.f1) :])


def test_template_split_shares_no_template():
    qs = [q for q, _ in synth_questions()]
    tr, va = template_split(qs, valid_fraction=0.3, seed=1)
    assert tr and va and len(tr) + len(va) == len(qs)
    assert not {qs[i].template for i in tr} & {qs[i].template for i in va}


def test_bounded_path_caches_label_exactly_as_unbounded(monkeypatch):
    """A 1M-triple KG's generated questions rarely share a topic, so the caches start over
    past MAX_CACHED_PATHS paths: the labels must not change, only what is kept."""
    from kgreason.pog.ranker import supervision

    kg = synth_kg()
    qs = [q for q, _ in synth_questions()][:60]
    full = asyncio.run(supervision.supervise(kg, qs, PoGSettings()))
    monkeypatch.setattr(supervision, "MAX_CACHED_PATHS", 5)
    enum = supervision.PathEnumerator(kg, PoGSettings())
    small = asyncio.run(supervision.supervise(kg, qs, PoGSettings(), enumerator=enum))
    assert enum._cached <= 5 + max(len(v) for v in enum._cache.values())
    for a in ("offsets", "rel", "sign", "scalars", "f1", "hit", "first_hit"):
        assert np.array_equal(getattr(full, a), getattr(small, a)), a
