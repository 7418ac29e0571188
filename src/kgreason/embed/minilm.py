"""The default embedder: all-MiniLM-L6-v2 (the paper's SBERT) in numpy, without torch.

Same tokenizer (WordPiece via the `tokenizers` Rust package, truncation at 256 tokens like
sentence-transformers' max_seq_length), same encoder, mean pooling and normalisation, so the
vectors match sentence-transformers' to cosine >= 0.99 (bench/embed_bench.py prints the
figures). Weights: the int8 copy vendored in models/minilm-l6-v2-int8/ (see PROVENANCE.md),
or any float BERT sentence-transformers directory given as `path`.
Texts are sorted by token length and batched so little work is spent on padding. Batches are
small (~512 padded tokens) and, when there are several, encoded on `threads` threads at once
with numpy's BLAS held to one thread meanwhile (embed/blas.py): numpy's element-wise steps
(GELU, softmax) run on one core, so threads over batches use the cores that one batch at a
time, with BLAS alone threaded, leaves idle (1.6x on a 2-core VM, bench/embed_bench.py).
Where a threaded BLAS cannot be held to one thread, batches run one at a time as before.
"""

from __future__ import annotations

import importlib.resources
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from kgreason.cpus import usable_cpus
from kgreason.embed.bert_numpy import BertWeights, encode
from kgreason.embed.blas import BLAS, BlasThreads
from kgreason.embed.errors import EmbedderError, ModelNotFoundError
from kgreason.embed.weights import MAX_SEQ_LENGTH, load_bert

MINILM_NAME = "all-MiniLM-L6-v2"
VENDORED_DIR = "minilm-l6-v2-int8"
_MODEL_FILES = ("model.safetensors", "tokenizer.json", "config.json")
# Tokens per batch (padded): large enough for efficient matmuls, small enough that a batch's
# activations stay in cache (512 measured 1.2-1.3x faster than 4096 on one thread).
_TOKENS_PER_BATCH = 512
#: threads when none are configured: the CPUs this process may run on, at most this many
MAX_DEFAULT_THREADS = 8


def default_threads() -> int:
    """The CPUs this process may run on (at most MAX_DEFAULT_THREADS)."""
    return min(usable_cpus(), MAX_DEFAULT_THREADS)


def vendored_minilm_path() -> Path:
    """Directory of the int8 all-MiniLM-L6-v2 shipped in this package."""
    return Path(str(importlib.resources.files("kgreason.embed") / "models" / VENDORED_DIR))


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (or another BERT sentence-transformers dir) on numpy float32."""

    #: costly per text: PoG's fuzzy ranking prefilters many paths (pog.fuzzy.static_prefilter)
    transformer = True

    def __init__(
        self,
        path: str | Path | None = None,
        batch_size: int = 64,
        max_seq_length: int = MAX_SEQ_LENGTH,
        threads: int = 0,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if threads < 0:
            raise ValueError(f"threads must be >= 0 (0: one per CPU), got {threads}")
        folder = vendored_minilm_path() if path is None else Path(path).expanduser()
        label = str(path) if path is not None else str(folder)
        if not folder.is_dir():
            raise ModelNotFoundError(label, f"model path {label} does not exist")
        missing = [f for f in _MODEL_FILES if not (folder / f).is_file()]
        if missing:
            raise ModelNotFoundError(label, f"not a BERT model directory, missing {missing}")
        from tokenizers import Tokenizer

        try:
            self._tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
        except Exception as e:  # the Rust package raises a plain Exception on bad JSON
            raise EmbedderError(f"tokenizer of {label} could not be read: {e}") from e
        self._weights: BertWeights = load_bert(folder)
        self.max_seq_length = min(max_seq_length, self._weights.max_positions)
        self._tok.no_padding()
        self._tok.enable_truncation(self.max_seq_length)
        self.batch_size = batch_size
        #: batches encoded at once (1: one after the other, BLAS threaded as numpy has it)
        self.threads = threads or default_threads()
        #: the process's BLAS coordinator (a test passes its own)
        self.blas: BlasThreads = BLAS
        self.name = MINILM_NAME if path is None else folder.name
        self.dim = self._weights.hidden

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        encodings = self._tok.encode_batch(texts, add_special_tokens=True)
        batches = list(self._batches([e.ids for e in encodings]))
        workers = min(self.threads, len(batches))
        if workers < 2 or not self.blas.usable():
            for rows, batch, mask in batches:
                out[rows] = encode(batch, mask, self._weights)
            return out
        with self.blas.one_thread(), ThreadPoolExecutor(workers, "kgreason-embed") as ex:
            vecs = ex.map(lambda b: encode(b[1], b[2], self._weights), batches)
            for (rows, _, _), v in zip(batches, vecs, strict=True):
                out[rows] = v
        return out

    def _batches(self, ids: list[list[int]]) -> Iterator[tuple[list[int], np.ndarray, np.ndarray]]:
        """(rows of `ids`, padded token ids, attention mask) per batch, by token length."""
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        start = 0
        while start < len(order):
            longest = len(ids[order[min(start + self.batch_size, len(order)) - 1]])
            size = max(1, min(self.batch_size, _TOKENS_PER_BATCH // max(longest, 1)))
            chunk = order[start : start + size]
            n = max(len(ids[i]) for i in chunk)
            batch = np.zeros((len(chunk), n), dtype=np.int64)
            mask = np.zeros((len(chunk), n), dtype=np.int8)
            for row, i in enumerate(chunk):
                batch[row, : len(ids[i])] = ids[i]
                mask[row, : len(ids[i])] = 1
            yield chunk, batch, mask
            start += size
