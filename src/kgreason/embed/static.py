"""Static (model2vec) backend: a token-vector table, mean-pooled; ~100x faster than MiniLM.

PoG's fuzzy path selection embeds thousands of path strings per question; the vendored
table is distilled from the same all-MiniLM-L6-v2 weights (see models/minilm-static/
PROVENANCE.md and `kgreason.embed.distill`), so its rankings track MiniLM's closely.
Texts are pooled word by word (`embed.wordpool`: each distinct word tokenized once per
call), the same vectors as model2vec's `encode` up to float rounding, 2.5-5.5x faster on
path texts (bench/static_pooling.py); a tokenizer that does not split at spaces first keeps
model2vec's own pooling.
"""

from __future__ import annotations

import importlib.resources
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from kgreason.embed.errors import EmbedderError, ModelNotFoundError
from kgreason.embed.offline import hub_offline
from kgreason.embed.wordpool import pooler_for

STATIC_NAME = "minilm-static"
_MODEL_FILES = ("model.safetensors", "tokenizer.json", "config.json")


def vendored_static_path() -> Path:
    """Directory of the static model distilled from all-MiniLM-L6-v2, shipped in this package."""
    return Path(str(importlib.resources.files("kgreason.embed") / "models" / STATIC_NAME))


def _load_plain(folder: Path, model_class: Callable[..., Any]) -> Any:
    """model2vec's from_pretrained(folder, normalize=True) for a local folder in model2vec's
    own layout without a model card (the vendored model): the same files read the same
    way, without importing model2vec.persistence, which imports huggingface_hub's model-card
    code (~0.25 s of a fresh `kgreason ask`). None for any other folder (a README.md gives
    from_pretrained metadata this does not read)."""
    if (folder / "README.md").exists():
        return None
    import json

    import safetensors
    from model2vec.model import DEFAULT_MAX_LENGTH
    from tokenizers import Tokenizer

    tensors = safetensors.safe_open(str(folder / "model.safetensors"), framework="numpy")
    names = set(tensors.keys())
    if "embeddings" not in names:
        return None
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    return model_class(
        vectors=tensors.get_tensor("embeddings"),
        tokenizer=Tokenizer.from_file(str(folder / "tokenizer.json")),
        weights=tensors.get_tensor("weights") if "weights" in names else None,
        token_mapping=tensors.get_tensor("mapping") if "mapping" in names else None,
        config=config,
        normalize=True,
        base_model_name=None,
        language=None,
        max_length=config.get("max_length", DEFAULT_MAX_LENGTH),
    )


class StaticEmbedder:
    """A model2vec `StaticModel` loaded from a local directory only."""

    def __init__(self, path: str | Path | None = None, batch_size: int = 1024) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        given = str(path) if path is not None else None
        folder = vendored_static_path() if path is None else Path(path).expanduser()
        label = given or str(folder)
        if not folder.is_dir():
            raise ModelNotFoundError(label, f"model path {label} does not exist")
        missing = [f for f in _MODEL_FILES if not (folder / f).is_file()]
        if missing:
            raise ModelNotFoundError(
                label, f"not a model2vec directory, missing {', '.join(missing)}"
            )
        with hub_offline():
            from model2vec import StaticModel

            try:
                self._model = _load_plain(folder, StaticModel)
                if self._model is None:
                    # An existing directory is read as is; force_download=False keeps the
                    # Hub out.
                    self._model = StaticModel.from_pretrained(
                        folder, normalize=True, force_download=False
                    )
            except (OSError, ValueError) as e:
                raise EmbedderError(f"static model {label} could not be loaded: {e}") from e
        self.batch_size = batch_size
        self._pooler = pooler_for(self._model, self._encode)
        self.name = STATIC_NAME if path is None else folder.name
        self.dim = int(self._model.dim)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self.normalize(
            self._encode(texts) if self._pooler is None else self._pooler.sums(texts)
        )

    def normalize(self, sums: np.ndarray) -> np.ndarray:
        """Renormalise in float32 (the table may be float16 or int8). A text with no known
        token maps to the zero vector; it stays zero rather than becoming NaN."""
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        return np.ascontiguousarray(sums / np.where(norms > 0, norms, 1.0), dtype=np.float32)

    def pieces(self) -> StaticEmbedder | None:
        """This embedder when its vectors add up over texts joined at a space (word by
        word pooling: pog/arrays/table_text.TextTree.vectors sums a path's from its pieces'), else
        None."""
        return None if self._pooler is None else self

    def piece_sums(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(sum of token vectors, token count, characters) of each text, unnormalised and
        untruncated: what adds up over texts joined at a space (see `pieces`)."""
        assert self._pooler is not None
        return self._pooler.word_sums(texts)

    def truncates(self, tokens: np.ndarray, chars: np.ndarray) -> np.ndarray:
        """Which texts of these counts the model truncates (embed them whole)."""
        assert self._pooler is not None
        return self._pooler.truncates(tokens, chars)

    def _encode(self, texts: list[str]) -> np.ndarray:
        """model2vec's own pooling."""
        out = self._model.encode(texts, batch_size=self.batch_size, show_progress_bar=False)
        return np.asarray(out, dtype=np.float32)
