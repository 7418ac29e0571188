"""The anchor threshold tau follows the embedder (measured in bench/lkg_tau.py) unless set."""

from __future__ import annotations

from tests.lkg.test_pipeline_fixtures import HashEmbedder

from kgreason.lkg.pipeline import SymbolLKG
from kgreason.lkg.settings import DEFAULT_TAU, LKGSettings, default_tau
from kgreason.lkg.storage import LKGStore
from kgreason.llm.testing import ScriptedLLM


class Named(HashEmbedder):
    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name


def test_measured_defaults_and_the_papers_value_otherwise():
    assert default_tau("all-MiniLM-L6-v2") == 0.35
    assert default_tau("minilm-static") == 0.35
    assert default_tau("bge-m3") == DEFAULT_TAU == 0.5
    assert default_tau(None) == 0.5


def test_an_explicit_tau_wins_for_every_embedder():
    s = LKGSettings(tau=0.8)
    assert s.tau_for("all-MiniLM-L6-v2") == 0.8 and s.tau_for("bge-m3") == 0.8
    assert LKGSettings().tau_for("all-MiniLM-L6-v2") == 0.35


def test_the_pipeline_retriever_uses_the_embedders_tau():
    llm = ScriptedLLM({"*": lambda m: "[]"})
    with LKGStore() as st:
        assert SymbolLKG(llm, Named("all-MiniLM-L6-v2")).retriever(st, None).tau == 0.35
        assert SymbolLKG(llm, Named("bge-m3")).retriever(st, None).tau == 0.5
        fixed = SymbolLKG(llm, Named("all-MiniLM-L6-v2"), LKGSettings(tau=0.6))
        assert fixed.retriever(st, None).tau == 0.6
