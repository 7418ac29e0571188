"""A free search's path vectors summed from its table's pieces (pathtext.TextTree.vectors,
fuzzy.path_vectors) are the static model's vectors of the rendered texts: within float
rounding, for several caps, with clustered hops, with texts the model truncates (embedded
whole), and fuzzy ranking orders the paths as it does from their texts."""

from __future__ import annotations

import random

import numpy as np
import pytest
from tests.pog.synth_graphs import synth_graphs

from kgreason.embed.cache import CachedEmbedder
from kgreason.embed.static import StaticEmbedder
from kgreason.pog.arrays import table_text as pathtext
from kgreason.pog.arrays.table import TablePaths
from kgreason.pog.fuzzy import FuzzySelector, path_vectors
from kgreason.pog.paths import find_entity_paths
from kgreason.pog.render import render_paths

WORDS = ["film", "river", "Nijmegen", "Ödön von Horváth", "x\tx", "北京", "", "a  b", "état-civil"]


@pytest.fixture(scope="module")
def emb():
    return StaticEmbedder()


@pytest.fixture(scope="module")
def searches():
    fast, _, names, deg = synth_graphs(mirror=400)
    rng = random.Random(7)
    starts = [str(names[i]) for i in np.argsort(-deg)[:2]]
    starts += rng.sample([str(names[i]) for i in np.flatnonzero(deg)], 4)
    out = []
    for s in starts:
        for lo, hi in ((1, 3), (2, 3)):
            res = find_entity_paths(fast, [s], min_len=lo, max_len=hi, max_paths=600)
            assert isinstance(res.paths, TablePaths)
            out.append(res)
    # names of several words, spaces inside names, accents, CJK, tabs, empty names
    ids = {x for res in out for p in res.paths for h in p.hops for x in h.dst}
    ids |= {x for res in out for x in res.entity_list}
    names = {x: " ".join(rng.sample(WORDS, rng.randint(1, 3))) for x in sorted(ids)}
    return out, names


@pytest.mark.parametrize("cap", [4, 1, None])
def test_vectors_are_the_embedded_texts(emb, searches, cap):
    out, names = searches
    alts = 0
    for res in out:
        tree = pathtext.text_tree(res.paths.table, names, cap, None, False)
        texts = tree.texts()
        assert texts == render_paths(list(res.paths), names, max_items=cap, with_ids=False)
        assert all(a.startswith(" ") and a.endswith(" ") for row in tree.arrows for a in row)
        got, want = tree.vectors(emb), emb.embed(texts)
        assert got.shape == want.shape == (len(texts), emb.dim)
        np.testing.assert_allclose(got, want, atol=2e-6)
        alts += any(" | " in a for row in tree.arrows for a in row)
    assert alts  # clustered hops' arrows (several relations) were summed


def test_texts_the_model_truncates_are_embedded_whole(emb, searches, monkeypatch):
    out, names = searches
    res = out[0]
    tree = pathtext.text_tree(res.paths.table, names, None, None, False)
    texts = tree.texts()
    _, tokens, _ = emb._pooler.word_sums(texts)
    limit = int(np.median(tokens))  # half the texts are "too long" for this model
    monkeypatch.setattr(emb._pooler, "max_tokens", limit)
    seen: list[list[str]] = []
    real = emb._encode

    def encode(batch):
        seen.append(list(batch))
        return real(batch)

    monkeypatch.setattr(emb._pooler, "fallback", encode)
    got = tree.vectors(emb)
    long = [t for t, n in zip(texts, tokens.tolist(), strict=True) if n > limit]
    assert long and sorted(seen[-1]) == sorted(long)  # only those, whole, by the model itself
    np.testing.assert_allclose(got, emb.embed(texts), atol=2e-6)


class _Counting(StaticEmbedder):
    """The static model, counting the texts it embeds whole."""

    def __init__(self) -> None:
        super().__init__()
        self.embedded = 0

    def embed(self, texts):  # type: ignore[no-untyped-def]
        self.embedded += len(texts)
        return super().embed(texts)


def test_fuzzy_ranking_from_the_table_is_ranking_from_the_texts(emb, searches):
    out, names = searches
    counting = _Counting()
    for res in out[:6]:
        a = FuzzySelector(CachedEmbedder(counting)).rank("Nijmegen river film", res.paths, names)
        b = FuzzySelector(CachedEmbedder(emb)).rank("Nijmegen river film", list(res.paths), names)
        assert [s.path.hops for s in a] == [s.path.hops for s in b]
        assert [s.text for s in a] == [s.text for s in b]
        np.testing.assert_allclose([s.score for s in a], [s.score for s in b], atol=2e-6)
    assert counting.embedded == 6  # the indicators only: the paths' vectors came from pieces


def test_an_embedder_without_pieces_embeds_the_texts(searches):
    out, names = searches
    res = out[0]

    class Plain:
        name, dim = "plain", 3

        def __init__(self):
            self.seen: list[str] = []

        def embed(self, texts):
            self.seen += list(texts)
            return np.ones((len(texts), 3), dtype=np.float32) / np.sqrt(3)

    tree = pathtext.text_tree(res.paths.table, names, 4, None, False)
    texts = tree.texts()
    plain = Plain()
    assert path_vectors(plain, texts, tree).shape == (len(texts), 3)
    assert plain.seen == texts


@pytest.mark.parametrize("cap", [4, None])
def test_cosines_are_the_vectors_cosines(emb, searches, cap):
    """TextTree.cosines (what fuzzy ranking uses: no 20,000 x 256 vectors made) equals the
    embedded texts' cosines to the query, and texts_at gives the texts it is asked for."""
    out, names = searches
    q = emb.embed(["Nijmegen river film"])[0]
    rng = random.Random(3)
    for res in out:
        tree = pathtext.text_tree(res.paths.table, names, cap, None, False)
        texts = tree.texts()
        np.testing.assert_allclose(tree.cosines(emb, q), emb.embed(texts) @ q, atol=2e-6)
        which = [*rng.sample(range(len(texts)), min(20, len(texts))), len(texts) - 1, 0]
        assert tree.texts_at(which) == [texts[i] for i in which]


def test_cosines_embed_the_texts_the_model_truncates_whole(emb, searches, monkeypatch):
    out, names = searches
    tree = pathtext.text_tree(out[0].paths.table, names, None, None, False)
    texts = tree.texts()
    _, tokens, _ = emb._pooler.word_sums(texts)
    monkeypatch.setattr(emb._pooler, "max_tokens", int(np.median(tokens)))
    q = emb.embed(["film"])[0]
    np.testing.assert_allclose(tree.cosines(emb, q), emb.embed(texts) @ q, atol=2e-6)
