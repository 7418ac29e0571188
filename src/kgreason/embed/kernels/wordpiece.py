"""A BERT WordPiece tokenizer and a static model's pooling in one compiled pass, for
printable-ASCII texts: each text's sum of (weighted) token vectors and its token count.

Why: PoG's fuzzy ranking on a large KG sums a few thousand distinct path pieces per question
(embed/wordpool.py). The Rust tokenizer costs 5-12 us per word through its Python binding
(an Encoding object each), and the rest of the pooling another ~4 us: 7,700 distinct words
of a 10M hub question took ~150 ms, most of the stage. Here one loop walks the text bytes,
splits them as BertPreTokenizer does, matches WordPiece's greedy longest-first pieces on a
trie of the vocabulary and adds up the token rows in the reference's order.

What it equals: the reference (embed/wordpool.py's word_sums through `tokenizers`), bit for
bit (tests/embed/test_wordpiece_kernel.py), because for printable ASCII
- BertNormalizer only lowercases (clean_text, accents and CJK padding change nothing);
- BertPreTokenizer splits at whitespace and isolates every punctuation character, and every
  printable ASCII character that is neither a letter, a digit nor a space is punctuation;
- WordPiece takes, from each position, the longest vocabulary piece (with "##" after the
  first), and makes a whole pre-token one [UNK] when some position matches none or the
  pre-token is longer than max_input_chars_per_word;
- sums are float32, token by token within a word and word by word within a text, as
  wordpool.segment_sums adds them.
Texts outside that (non-ASCII, control characters, an added token such as "[UNK]" written
out) and tokenizers of another kind go to the reference. The numpy-free reference is the
tokenizer itself; numba compiles this loop under kgreason.jit's rules.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import partial
from itertools import pairwise
from typing import Any

import numpy as np

from kgreason.jit import compiled, run_parallel, threads, use_jit

#: characters of a batch below which the reference is used (the loop's call costs more)
MIN_ROWS = 20_000
#: characters per part when a batch is split over threads (the loop releases the GIL)
PART_CHARS = 40_000
SPACE, RUN, PUNCT = 0, 1, 2


def _pool_loop(
    buf, off, cls, first, echar, echild, term, roots, dense, emb, weight, rowmap, limits
):  # pragma: no cover (compiled)
    unk, max_chars = limits[0], limits[1]
    n = len(off) - 1
    dim = emb.shape[1]
    out = np.zeros((n, dim), dtype=np.float32)
    raw = np.zeros(n, dtype=np.int64)
    word = np.zeros(dim, dtype=np.float32)
    ids = np.empty(max(1, int(off[n] - off[0])), dtype=np.int64)
    for t in range(n):
        i, end = off[t], off[t + 1]
        while True:  # each space-separated word (text.split(" "))
            j = i
            while j < end and buf[j] != 32:
                j += 1
            nt = 0
            p = i
            while p < j:  # each pre-token: a run of letters and digits, or one punctuation
                q = p + 1
                if cls[buf[p]] == 1:
                    while q < j and cls[buf[q]] == 1:
                        q += 1
                start = nt
                bad = q - p > max_chars
                s = p
                while s < q and not bad:  # greedy longest-first pieces
                    node = roots[0] if s == p else roots[1]
                    best, best_end, k = -1, -1, s
                    while k < q:
                        c = buf[k]
                        child = -1
                        if k == s:  # a root has most characters as children: one lookup
                            child = dense[0 if s == p else 1, c]
                        else:
                            for e in range(first[node], first[node + 1]):
                                if echar[e] == c:
                                    child = echild[e]
                                    break
                        if child < 0:
                            break
                        node = child
                        k += 1
                        if term[node] >= 0:
                            best, best_end = term[node], k
                    if best < 0:
                        bad = True
                    else:
                        ids[nt] = best
                        nt += 1
                        s = best_end
                if bad:  # the whole pre-token is one [UNK]
                    nt = start
                    ids[nt] = unk
                    nt += 1
                p = q
            raw[t] += nt
            word[:] = 0
            for m in range(nt):
                tok = ids[m]
                if tok != unk:
                    r = rowmap[tok]
                    wt = weight[tok]
                    for d in range(dim):
                        word[d] += np.float32(emb[r, d]) * wt
            for d in range(dim):
                out[t, d] += word[d]
            if j >= end:
                break
            i = j + 1
    return out, raw


_ARGS = (
    "uint8[::1], int64[::1], uint8[::1], int64[::1], uint8[::1], int64[::1], int64[::1],"
    " int64[::1], int64[:, ::1], {emb}, float32[::1], int64[::1], int64[::1]"
)
_RET = "Tuple((float32[:, ::1], int64[::1]))"
LOOPS = [
    (_pool_loop, f"{_RET}({_ARGS.format(emb='int8[:, ::1]')})"),
    (_pool_loop, f"{_RET}({_ARGS.format(emb='float32[:, ::1]')})"),
]


@dataclass(frozen=True)
class Trie:
    """The vocabulary as a character trie: node n's edges are first[n]:first[n+1] (their
    character echar, their node echild); term[n] is the token id a node spells, or -1.
    roots[0] starts a word's first piece, roots[1] a continuing one (the prefix stripped);
    dense[r, c] is root r's child by byte c (-1: none)."""

    first: np.ndarray
    echar: np.ndarray
    echild: np.ndarray
    term: np.ndarray
    roots: np.ndarray
    dense: np.ndarray


def build_trie(vocab: dict[str, int], prefix: str) -> Trie:
    """The ASCII entries of `vocab` (no ASCII text can match the others)."""
    children: list[dict[int, int]] = [{}, {}]
    term = [-1, -1]
    for piece, tid in vocab.items():
        if not piece.isascii():
            continue
        starts = [(0, piece)]
        if prefix and piece.startswith(prefix) and len(piece) > len(prefix):
            starts.append((1, piece[len(prefix) :]))
        for root, text in starts:
            node = root
            for c in text.encode("ascii"):
                nxt = children[node].get(c)
                if nxt is None:
                    nxt = len(children)
                    children[node][c] = nxt
                    children.append({})
                    term.append(-1)
                node = nxt
            term[node] = tid
    lens = np.fromiter(map(len, children), dtype=np.int64, count=len(children))
    first = np.zeros(len(children) + 1, dtype=np.int64)
    np.cumsum(lens, out=first[1:])
    echar = np.fromiter((c for ch in children for c in ch), dtype=np.uint8, count=int(first[-1]))
    echild = np.fromiter(
        (n for ch in children for n in ch.values()), dtype=np.int64, count=int(first[-1])
    )
    dense = np.full((2, 256), -1, dtype=np.int64)
    for root in (0, 1):
        for c, child in children[root].items():
            dense[root, c] = child
    return Trie(first, echar, echild, np.asarray(term, dtype=np.int64), np.array([0, 1]), dense)


def char_classes() -> np.ndarray:
    """BertPreTokenizer's view of each byte below 128: space, letter/digit run, punctuation."""
    cls = np.full(256, PUNCT, dtype=np.uint8)
    for c in range(128):
        ch = chr(c)
        if ch.isalnum():
            cls[c] = RUN
        elif ch.isspace():
            cls[c] = SPACE
    return cls


class WordPieceKernel:
    """The compiled pooling for one model (see the module doc); `for_model` says whether it
    applies."""

    def __init__(self, spec: dict[str, Any], embedding: np.ndarray, weights: Any, mapping: Any):
        model = spec["model"]
        self.lowercase = bool((spec.get("normalizer") or {}).get("lowercase", True))
        self.vocab: dict[str, int] = model["vocab"]
        self.prefix = str(model.get("continuing_subword_prefix") or "##")
        self.unk = int(self.vocab[model["unk_token"]])
        self.max_chars = int(model.get("max_input_chars_per_word", 100))
        added = (str(t.get("content", "")) for t in spec.get("added_tokens") or [])
        self.added_low = [a.lower() for a in added if a]
        n = len(self.vocab)
        self.emb = np.ascontiguousarray(
            embedding if embedding.dtype == np.int8 else embedding.astype(np.float32)
        )
        self.weights = (
            np.ones(n, dtype=np.float32)
            if weights is None
            else np.ascontiguousarray(weights, dtype=np.float32)
        )
        self.rowmap = (
            np.arange(n, dtype=np.int64)
            if mapping is None
            else np.ascontiguousarray(mapping, dtype=np.int64)
        )
        self._trie: Trie | None = None
        self.cls = char_classes()
        self.limits = np.array([self.unk, self.max_chars], dtype=np.int64)

    @staticmethod
    def for_model(model: Any) -> WordPieceKernel | None:
        """A kernel for a model2vec model whose tokenizer is a BertNormalizer +
        BertPreTokenizer + WordPiece one, else None (the reference handles it)."""
        try:
            spec = json.loads(model.tokenizer.to_str())
            m = spec["model"]
            norm = spec.get("normalizer") or {}
            if m.get("type") != "WordPiece" or norm.get("type") != "BertNormalizer":
                return None
            if (spec.get("pre_tokenizer") or {}).get("type") != "BertPreTokenizer":
                return None
            if m.get("unk_token") not in m["vocab"]:
                return None
            return WordPieceKernel(
                spec,
                np.asarray(model.embedding),
                getattr(model, "weights", None),
                getattr(model, "token_mapping", None),
            )
        except (AttributeError, KeyError, TypeError, ValueError):
            return None

    def eligible(self, texts: list[str]) -> np.ndarray:
        """Which texts the loop pools (printable ASCII, no added token written out)."""
        whole = "".join(texts)
        low = whole.lower()
        if whole.isascii() and whole.isprintable() and not any(a in low for a in self.added_low):
            return np.ones(len(texts), dtype=bool)
        return np.fromiter(
            (
                t.isascii() and t.isprintable() and not any(a in t.lower() for a in self.added_low)
                for t in texts
            ),
            dtype=bool,
            count=len(texts),
        )

    def usable(self, texts: list[str], jit: bool | None = None) -> Any:
        """The compiled loop when this batch should take it (kgreason.jit.use_jit), else None."""
        chars = sum(map(len, texts))
        if not use_jit(chars, MIN_ROWS, jit):
            return None
        return compiled(*LOOPS[0 if self.emb.dtype == np.int8 else 1])

    def pool(self, loop: Any, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """(sums, raw token counts) of eligible texts through the compiled `loop`; a large
        batch in parts on up to kgreason.jit.threads() threads (each text's sums depend on
        it alone, so the parts give what one call would)."""
        if self._trie is None:
            self._trie = build_trie(self.vocab, self.prefix)
        whole = "".join(texts)
        text = whole.lower() if self.lowercase else whole
        buf = np.frombuffer(bytearray(text.encode("ascii")), np.uint8)  # writable: no copy
        off = np.zeros(len(texts) + 1, dtype=np.int64)
        np.cumsum(np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)), out=off[1:])
        n_parts = min(threads(), max(1, int(off[-1]) // PART_CHARS))
        if n_parts < 2:
            return self._call(loop, buf, off)
        cuts = np.searchsorted(off, np.linspace(0, off[-1], n_parts + 1)[1:-1])
        bounds = [0, *sorted(set(cuts.tolist())), len(texts)]
        parts = run_parallel(
            [partial(self._call, loop, buf, off[a : b + 1]) for a, b in pairwise(bounds) if b > a]
        )
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])

    def _call(self, loop: Any, buf: np.ndarray, off: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        tr = self._trie
        assert tr is not None
        return loop(
            buf, np.ascontiguousarray(off), self.cls, tr.first, tr.echar, tr.echild, tr.term,
            tr.roots, tr.dense, self.emb, self.weights, self.rowmap, self.limits,
        )  # fmt: skip


def bert_spec(vocab: dict[str, int]) -> dict[str, Any]:
    """A tokenizer spec (tokenizers' JSON form) of a lowercasing BERT WordPiece tokenizer
    over `vocab` (which holds "[UNK]"): for small kernels in warm-up and tests."""
    return {
        "normalizer": {"type": "BertNormalizer", "lowercase": True},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "vocab": vocab},
    }


def warm_inputs() -> bool:
    """One compiled call on a two-piece vocabulary (kernels.warm)."""
    spec = bert_spec({"[UNK]": 0, "ab": 1, "##c": 2})
    k = WordPieceKernel(spec, np.ones((3, 2), dtype=np.int8), None, None)
    loop = k.usable(["abc"], jit=True)
    if loop is None:
        return False
    sums, raw = k.pool(loop, ["ABc ab x"])
    return int(raw[0]) == 4 and float(sums[0, 0]) == 3.0
