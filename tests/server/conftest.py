"""Fixtures of the server tests: one warm LLM-free service over the bundled KG (loaded once
per session, as the server does), and services whose LLM is a gate the test opens."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

import kgreason
from kgreason.server.service import Limits, Service
from tests.server.doubles import BlockingKG, GatedLLM

#: a question whose topic is given, so the first LLM call is question analysis
GATED_QUESTION = {"question": "who directed [Once Were Warriors]", "topics": ["Once Were Warriors"]}


@pytest.fixture(scope="session")
def warm() -> Iterator[Service]:
    """The bundled KG, LLM-free (default settings: no file, no environment)."""
    svc = Service.from_settings(kgreason.Settings(), llm_free=True)
    yield svc
    kgreason.run_sync(svc.aclose())


@pytest.fixture
def gated(warm: Service) -> Callable[..., tuple[Service, GatedLLM]]:
    """A service sharing the warm KG whose PoG waits on a GatedLLM at its first LLM call."""

    def make(**limits: object) -> tuple[Service, GatedLLM]:
        llm = GatedLLM()
        pog = kgreason.PoG(warm.kg, llm, warm.pog_free.embedder)
        svc = Service(
            warm.kg, pog, warm.lkg, llm_free=False, limits=Limits(**limits),  # type: ignore[arg-type]
            pog_free=warm.pog_free,
        )  # fmt: skip
        return svc, llm

    return make


@pytest.fixture
def blocking(warm: Service) -> Callable[..., tuple[Service, BlockingKG]]:
    """An LLM-free service whose questions block in the KG (off the event loop, on the
    service's worker thread) until the test releases them."""

    def make(**limits: object) -> tuple[Service, BlockingKG]:
        kg = BlockingKG(warm.kg)
        base = warm.pog_free
        pog = kgreason.PoG(kg, None, base.embedder, base.settings, fuzzy=base.fuzzy)  # type: ignore[arg-type]
        svc = Service(kg, pog, warm.lkg, llm_free=True, limits=Limits(**limits))  # type: ignore[arg-type]
        return svc, kg

    return make
