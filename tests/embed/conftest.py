"""Each model is loaded once per session, with outbound network blocked during the load.

`minilm` is the default torch-free MiniLM; `sbert` the sentence-transformers reference, which
skips with a reason when the `kgreason[sbert]` extra (torch) is not installed."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from kgreason.embed.minilm import MiniLMEmbedder
from kgreason.embed.sbert import SentenceTransformerEmbedder, require_sbert
from kgreason.embed.static import StaticEmbedder

SBERT_SKIP = "needs torch + sentence-transformers (pip install -e '.[sbert]')"


@contextmanager
def no_network(attempts: list) -> Iterator[None]:
    """Record and refuse every DNS lookup and socket connect (loopback included)."""

    def refuse(*args, **kwargs):
        attempts.append(args)
        raise OSError("network disabled by test")

    mp = pytest.MonkeyPatch()
    mp.setattr(socket.socket, "connect", refuse)
    mp.setattr(socket.socket, "connect_ex", refuse)
    mp.setattr(socket, "getaddrinfo", refuse)
    mp.setattr(socket, "create_connection", refuse)
    try:
        yield
    finally:
        mp.undo()


def sbert_available() -> bool:
    try:
        require_sbert()
    except ImportError:
        return False
    return True


@pytest.fixture(scope="session")
def minilm_loaded() -> tuple[MiniLMEmbedder, list]:
    attempts: list = []
    with no_network(attempts):
        emb = MiniLMEmbedder(batch_size=32)
    return emb, attempts


@pytest.fixture(scope="session")
def sbert_loaded() -> tuple[SentenceTransformerEmbedder, list]:
    if not sbert_available():
        pytest.skip(SBERT_SKIP)
    attempts: list = []
    with no_network(attempts):
        emb = SentenceTransformerEmbedder.minilm(batch_size=32)
    return emb, attempts


@pytest.fixture(scope="session")
def static_loaded() -> tuple[StaticEmbedder, list]:
    attempts: list = []
    with no_network(attempts):
        emb = StaticEmbedder()
    return emb, attempts


@pytest.fixture(scope="session")
def minilm(minilm_loaded) -> MiniLMEmbedder:
    return minilm_loaded[0]


@pytest.fixture(scope="session")
def sbert(sbert_loaded) -> SentenceTransformerEmbedder:
    return sbert_loaded[0]


@pytest.fixture(scope="session")
def static(static_loaded) -> StaticEmbedder:
    return static_loaded[0]
