"""Fixtures for the LLM tests: a local OpenAI-protocol server (see fake_server.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.llm.fake_server import FakeOpenAIServer


@pytest.fixture
def openai_server() -> Iterator[FakeOpenAIServer]:
    s = FakeOpenAIServer().start()
    try:
        yield s
    finally:
        s.close()
