"""A static model's mean pooling computed word by word: each distinct space-separated word
of a batch is tokenized once, and a text's vector is the sum of its words' token vectors.

Why: model2vec tokenizes every text and pools it in a Python loop per text, ~50-100 us a
text on this project's CPUs. PoG's fuzzy ranking on a large KG embeds up to 20,000 path
texts per question with the static model (the LLM-free ranking, and the prefilter in front
of MiniLM), 2+ seconds, yet those texts repeat few words: a 10M-triple hub question's
20,000 texts hold 521,089 words, 5,858 of them distinct.

Why it is the same vector: a BERT-style tokenizer (BertNormalizer, BertPreTokenizer) splits
the text at every space before it splits anything else, and everything it does within a
word (normalising, punctuation, WordPiece, the [UNK] model2vec drops) sees only that word.
So a text's tokens are its words' tokens, in order, and model2vec's mean of token vectors
(weighted by the model's per-token weights) is, after the normalisation both apply, the
sum of per-word sums. Float32 sums in another order: equal to model2vec within ~1e-6.
`pooler_for` returns None for a tokenizer where that does not hold (another normaliser or
pre-tokenizer, an added token with a space in it); texts model2vec would truncate (more
than `max_length` tokens, or more characters than it keeps) are passed to model2vec.
A text's vector depends only on the text, never on the rest of its batch.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from itertools import chain
from typing import Any

import numpy as np

from kgreason.embed.kernels.wordpiece import WordPieceKernel

#: tokenizer parts that only ever see one space-separated word at a time
LOCAL_NORMALIZERS = {None, "BertNormalizer", "Lowercase", "NFD", "NFC", "NFKC", "NFKD"}
LOCAL_PRE_TOKENIZERS = {"BertPreTokenizer", "Whitespace", "WhitespaceSplit"}
#: segments summed at once (work arrays of BLOCK x dim float32: 8 MB at 256 dimensions)
BLOCK = 8192


class WordPooler:
    """Sums of token vectors per text for one model2vec StaticModel (see the module doc)."""

    def __init__(self, model: Any, fallback: Callable[[list[str]], np.ndarray]) -> None:
        from tokenizers import Tokenizer

        # an own copy, without padding or truncation: model2vec changes its tokenizer's
        # truncation during each encode, and a word's full token count decides truncation
        self.tokenizer = Tokenizer.from_str(model.tokenizer.to_str())
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()
        self.embedding = model.embedding
        self.weights = getattr(model, "weights", None)
        self.mapping = getattr(model, "token_mapping", None)
        self.unk = getattr(model, "unk_token_id", None)
        max_length = getattr(model, "max_length", None)
        self.max_tokens = max_length
        self.max_chars = None if max_length is None else max_length * model.median_token_length
        self.fallback = fallback  # model2vec's own pooling, for texts it would truncate
        self.kernel = WordPieceKernel.for_model(model)  # the compiled form, where it applies

    def sums(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), dim) float32: each text's sum of (weighted) token vectors; any
        positive multiple of model2vec's mean, so equal once normalised."""
        out, tokens, chars = self.word_sums(texts)
        long = self.truncates(tokens, chars)
        if long.any():
            which = np.flatnonzero(long)
            out[which] = self.fallback([texts[i] for i in which.tolist()])
        return out

    def word_sums(
        self, texts: Sequence[str], jit: bool | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(each text's sum of token vectors, its token count with [UNK], its characters),
        the texts model2vec would truncate included. All three add up over texts joined at a
        space: a text's words are its parts' words ("" has no tokens). Large batches of
        printable-ASCII texts take the compiled loop (embed/kernels/wordpiece.py: the same
        sums, bit for bit), the rest `reference_sums`."""
        texts = list(texts)
        kernel = self.kernel
        loop = None if kernel is None else kernel.usable(texts, jit)
        if kernel is None or loop is None:
            return self.reference_sums(texts)
        ok = kernel.eligible(texts)
        chars = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
        if ok.all():
            sums, tokens = kernel.pool(loop, texts)
            return sums, tokens, chars
        out = np.zeros((len(texts), self.embedding.shape[1]), dtype=np.float32)
        tokens = np.zeros(len(texts), dtype=np.int64)
        yes, no = np.flatnonzero(ok), np.flatnonzero(~ok)
        if len(yes):
            out[yes], tokens[yes] = kernel.pool(loop, [texts[i] for i in yes.tolist()])
        got = self.reference_sums([texts[i] for i in no.tolist()])
        out[no], tokens[no] = got[0], got[1]
        return out, tokens, chars

    def reference_sums(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """word_sums through the `tokenizers` tokenizer, each distinct word once."""
        splits = [t.split(" ") for t in texts]
        n_words = np.fromiter(map(len, splits), dtype=np.int64, count=len(splits))
        flat = list(chain.from_iterable(splits))
        vocab = list(dict.fromkeys(flat))
        index = {w: i for i, w in enumerate(vocab)}
        wid = np.fromiter(map(index.__getitem__, flat), dtype=np.int64, count=len(flat))
        word_vecs, raw = self._words(vocab)
        # every text has at least one word ("".split(" ") == [""]): reduceat is exact
        tokens = np.add.reduceat(raw[wid], np.cumsum(n_words) - n_words) if len(texts) else raw[:0]
        chars = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
        return segment_sums(word_vecs, wid, n_words), tokens, chars

    def truncates(self, tokens: np.ndarray, chars: np.ndarray) -> np.ndarray:
        """Which texts (of these token and character counts) model2vec truncates: it pools
        them itself."""
        long = np.zeros(len(tokens), dtype=bool)
        if self.max_tokens is not None:
            long |= tokens > self.max_tokens
            if self.max_chars is not None:
                long |= chars > self.max_chars
        return long

    def _words(self, vocab: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Each word's sum of token vectors ([UNK] left out) and its token count ([UNK]
        included: that count decides truncation)."""
        encs = self.tokenizer.encode_batch_fast(vocab, add_special_tokens=False)
        ids_l = [e.ids for e in encs]
        lens = np.fromiter(map(len, ids_l), dtype=np.int64, count=len(ids_l))
        ids = np.fromiter(chain.from_iterable(ids_l), dtype=np.int64, count=int(lens.sum()))
        raw = lens.copy()
        if self.unk is not None:
            known = ids != self.unk
            owner = np.repeat(np.arange(len(vocab)), lens)
            lens = np.bincount(owner[known], minlength=len(vocab)).astype(np.int64)
            ids = ids[known]
        uniq, inv = np.unique(ids, return_inverse=True)
        rows = uniq if self.mapping is None else np.asarray(self.mapping)[uniq]
        table = self.embedding[rows].astype(np.float32)
        if self.weights is not None:
            table *= np.asarray(self.weights, dtype=np.float32)[uniq][:, None]
        return segment_sums(table, inv.reshape(-1).astype(np.int64), lens), raw


def segment_sums(table: np.ndarray, ids: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """float32 sums of table[ids[a:a+n]] for consecutive segments of lengths `lens`, each
    added up in its own order (so a segment's sum does not depend on the others). Summed
    position by position over the segments sorted by length, BLOCK segments at a time: one
    gather and one add over contiguous rows per position (numpy's reduceat and cumsum along
    rows were 4-5x slower), with work arrays of BLOCK rows whatever the batch."""
    k, dim = len(lens), table.shape[1]
    out = np.zeros((k, dim), dtype=np.float32)
    if not k or not len(ids):
        return out
    order = np.argsort(-lens, kind="stable")
    starts = np.cumsum(lens) - lens
    src = np.ascontiguousarray(table, dtype=np.float32)
    acc = np.empty((min(k, BLOCK), dim), dtype=np.float32)
    buf = np.empty_like(acc)
    for b0 in range(0, k, BLOCK):
        blk = order[b0 : b0 + BLOCK]
        sl, st, m = lens[blk], starts[blk], len(blk)
        acc[:m] = 0
        # segments with more than j items: the first n_at[j] of the block
        n_at = np.searchsorted(-sl, -np.arange(1, int(sl[0]) + 1), side="right")
        for j, n in enumerate(n_at.tolist()):
            np.take(src, ids[st[:n] + j], axis=0, out=buf[:n])
            acc[:n] += buf[:n]
        out[blk] = acc[:m]
    return out


def pooler_for(model: Any, fallback: Callable[[list[str]], np.ndarray]) -> WordPooler | None:
    """A WordPooler for `model` when its tokenizer splits at spaces first and handles each
    word on its own (see the module doc); None otherwise (model2vec then pools every text)."""
    try:
        spec = json.loads(model.tokenizer.to_str())
        int(model.embedding.shape[1])  # a table of vectors, or no pooler
        int(model.median_token_length)
    except (AttributeError, TypeError, ValueError, IndexError):
        return None
    norm = (spec.get("normalizer") or {}).get("type")
    pre = (spec.get("pre_tokenizer") or {}).get("type")
    if norm not in LOCAL_NORMALIZERS or pre not in LOCAL_PRE_TOKENIZERS:
        return None
    added = spec.get("added_tokens") or []
    if any(any(c.isspace() for c in str(t.get("content", ""))) for t in added):
        return None  # an added token spanning a space would join two words
    return WordPooler(model, fallback)
