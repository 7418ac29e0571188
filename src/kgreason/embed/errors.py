"""Typed embedding errors: callers (config, CLI `doctor`) report them in one line."""

from __future__ import annotations


class EmbedderError(RuntimeError):
    """An embedding backend could not be built or used."""


class ModelNotFoundError(EmbedderError, FileNotFoundError):
    """A configured model path or name cannot be found locally (nothing is downloaded)."""

    def __init__(self, model: str, reason: str) -> None:
        self.model = model
        super().__init__(f"embedding model '{model}': {reason}")
