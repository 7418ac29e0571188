"""A service whose settings configure an LLM (a real OpenAI-protocol server on 127.0.0.1,
tests/llm/fake_server.py): both pipelines share that one LLM stack, questions default to
PoG, and `llm_free=True` (server-wide or per request) never calls it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

import kgreason
from kgreason.server.models import AskRequest, SolveRequest
from kgreason.server.service import Service
from tests.llm.fake_server import FakeOpenAIServer


@pytest.fixture
def openai_server() -> Iterator[FakeOpenAIServer]:
    s = FakeOpenAIServer().start()
    try:
        yield s
    finally:
        s.close()


def settings(server: FakeOpenAIServer, tmp_path: Path) -> kgreason.Settings:
    return kgreason.Settings(
        llm={"base_url": server.base_url, "api_key": "test", "model": "m", "cache": False,
             "max_retries": 0, "cache_path": tmp_path / "c.sqlite"},
    )  # fmt: skip


def test_configured_llm_is_shared_and_used(openai_server, tmp_path: Path) -> None:
    analysis = {"split_questions": ["who directed it"], "indicator": '"x" - directed by - y'}
    openai_server.plan = [("ok", json.dumps(analysis))] + [("ok", "not what a stage wants")] * 40
    svc = Service.from_settings(settings(openai_server, tmp_path))

    async def scenario() -> tuple[dict, dict, dict]:
        try:
            pog = await svc.ask(AskRequest(question="who directed [Once Were Warriors]",
                                           topics=["Once Were Warriors"]))  # fmt: skip
            n = len(openai_server.requests)
            free = await svc.ask(AskRequest(question="who directed [Once Were Warriors]",
                                            llm_free=True))  # fmt: skip
            assert len(openai_server.requests) == n  # the LLM-free mode never called it
            solved = await svc.solve(SolveRequest(context="Cats purr.", question="Do cats purr?"))
            return pog, free, solved
        finally:
            await svc.aclose()

    assert not svc.llm_free and svc.lkg.llm is svc.pog.llm is not None
    pog, free, solved = asyncio.run(scenario())
    assert pog["mode"] == "pog" and pog["usage"]["question_analysis"]["calls"] >= 1
    assert free["mode"] == "llm-free"
    assert solved["usage"]["total"]["calls"] >= 1  # SymbolLKG asked the same server
    assert openai_server.requests


def test_llm_free_service_builds_no_llm(openai_server, tmp_path: Path) -> None:
    svc = Service.from_settings(settings(openai_server, tmp_path), llm_free=True)
    try:
        assert svc.llm_free and svc.pog.llm is None and svc.lkg.llm is None
    finally:
        asyncio.run(svc.aclose())
    assert openai_server.requests == []
