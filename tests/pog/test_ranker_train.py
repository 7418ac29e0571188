"""Training on a synthetic task whose relation names carry no meaning: the trained ranker must
beat the untrained (hop-aligned) ranking on phrasings it never saw; artefact round trip."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest
from tests.pog.ranker_synth import train_synth

from kgreason.embed import build_embedder
from kgreason.embed.settings import EmbedSettings
from kgreason.pog.graph import prepare_graph
from kgreason.pog.paths import supplement_paths
from kgreason.pog.ranker.artefact import RankerError, check_kg, load_ranker
from kgreason.pog.ranker.train import encode, metrics, zero_shot_scores
from kgreason.pog.settings import PoGSettings


@pytest.fixture(scope="module")
def embedder():
    return build_embedder(EmbedSettings(backend="static"))


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    out = tmp_path_factory.mktemp("ranker") / "synth"
    kg, sup, va, res = train_synth(out)
    return kg, sup, va, res, out


def test_trained_ranker_beats_the_untrained_ranking_on_unseen_phrasings(trained, embedder):
    _kg, sup, va, res, _ = trained
    learned = res.valid[res.kind]["all"]["hits1"]
    enc = encode(sup, embedder, 10, res.proj)
    zero = metrics(sup, va, zero_shot_scores(sup, enc, va, 0.02))["all"]["hits1"]
    assert learned >= 80.0, res.valid
    assert learned >= zero + 30.0, (learned, zero)
    assert set(res.valid) == {"linear", "mlp"} and res.kind in res.valid


def test_artefact_round_trip_scores_paths_like_training(trained, embedder):
    kg, _sup, _va, res, out = trained
    ranker = load_ranker(out, embedder)
    assert ranker.spec["model"]["kind"] == res.kind
    assert ranker.spec["validation"] == res.valid

    async def paths():
        prep = await prepare_graph(kg, ["film3"], PoGSettings())
        return supplement_paths(prep.graph, ["film3"], n_topics=1, d_max=3, max_paths=1000).paths

    ps = asyncio.run(paths())
    s = ranker.score("which actors acted in the film [film3]", ["film3"], ps, ["film3"])
    top = ps[int(np.argmax(s))]
    assert [(h.relation, h.forward) for h in top.hops] == [("p4", True)]
    # built by the artefact itself (the embedder named in ranker.json)
    again = load_ranker(out)
    assert np.allclose(
        again.score("who directed [film3]", ["film3"], ps, ["film3"]),
        ranker.score("who directed [film3]", ["film3"], ps, ["film3"]),
        atol=1e-5,
    )


def test_kg_mismatch_is_named_and_relation_vocabulary_difference_warned(trained, embedder):
    kg, _, _, _, out = trained
    ranker = load_ranker(out, embedder)
    assert check_kg(ranker, kg.name, kg.fingerprint(), ["p1", "p2"]) == []
    w = check_kg(ranker, "other", "f" * 64, ["p1", "directed_by"])
    assert any("trained on KG 'synth'" in x and "'other'" in x for x in w)
    assert any("relation vocabulary differs" in x and "directed_by" in x for x in w)


def test_unusable_artefacts_raise_a_named_error(tmp_path: Path, trained):
    with pytest.raises(RankerError, match="not a ranker artefact"):
        load_ranker(tmp_path)
    (tmp_path / "ranker.json").write_text('{"format": "other", "version": 9}')
    with pytest.raises(RankerError, match="format 'other' version 9"):
        load_ranker(tmp_path)
    (tmp_path / "ranker.json").write_text("{not json")
    with pytest.raises(RankerError, match="unreadable JSON"):
        load_ranker(tmp_path)


def test_truncated_weights_raise_a_named_error(trained, tmp_path: Path):
    import shutil

    *_, out = trained
    bad = tmp_path / "bad"
    shutil.copytree(out, bad)
    w = bad / "weights.safetensors"
    w.write_bytes(w.read_bytes()[:50])
    with pytest.raises(RankerError, match=r"unreadable weights\.safetensors"):
        load_ranker(bad)


def test_ask_time_scoring_equals_the_training_feature_rows(trained, embedder):
    kg, *_, out = trained
    from kgreason.pog.clustering import ClusteredGraph
    from kgreason.pog.paths import supplement_paths

    g = ClusteredGraph.from_triples(kg._triples)
    paths = supplement_paths(g, ["film9"], n_topics=1, d_max=3, max_paths=1000).paths
    for kind in ("linear", "mlp"):
        ranker = load_ranker(out, embedder)
        if ranker.scorer.kind != kind:
            continue
        q = "who is the director of [film9]"
        fast = ranker.score(q, ["film9"], paths, ["film9"])
        slow = ranker.score_rows(q, ["film9"], paths, ["film9"])
        assert np.allclose(fast, slow, atol=1e-3), np.abs(fast - slow).max()


def test_order_feature_at_training_equals_the_ask_time_feature(trained, embedder):
    """New artefacts list `order_align` last in features.scalars; the column training
    computed from the labelled set is the one ask time computes from the paths."""
    from kgreason.pog.ranker.align import unit
    from kgreason.pog.ranker.features import relation_text
    from kgreason.pog.ranker.supervision import PathEnumerator
    from kgreason.pog.ranker.train import order_rows

    kg, sup, _va, _res, out = trained
    ranker = load_ranker(out, embedder)
    assert ranker.ordered and ranker.spec["features"]["scalars"][-1] == "order_align"
    rel_unit = unit(np.asarray(embedder.embed([relation_text(r) for r in sup.vocab])))
    column = order_rows(sup, embedder, rel_unit)[:, 0]
    assert np.ptp(column) > 0
    enum = PathEnumerator(kg, PoGSettings())
    for i in range(0, len(sup), max(1, len(sup) // 12)):
        q = sup.questions[i]
        paths = asyncio.run(enum.paths(q.topic_ids))
        scalars = ranker._features(q.text, q.mentions, paths, q.topic_ids)[3]
        assert np.allclose(scalars[:, -1], column[sup.candidates(i)], atol=1e-4), q.text
