"""The one backoff policy, in the two jitter shapes its two clients use."""

from __future__ import annotations

import random

import pytest

from kgreason.backoff import Backoff
from kgreason.kg.sparql.client import RetryPolicy, SparqlClient
from kgreason.llm.retry import RetryingLLM
from kgreason.llm.testing import ScriptedLLM


def test_full_jitter_stays_under_the_step_and_honours_a_capped_hint() -> None:
    b = Backoff(5, base_s=1.0, cap_s=4.0, jitter="full", rng=random.Random(3))
    for n in range(8):
        assert 0.0 <= b.delay(n) <= min(4.0, 2.0**n)
    assert b.delay(0, hint=2.5) >= 2.5
    assert b.delay(0, hint=60.0) == 4.0


def test_added_jitter_never_pauses_less_than_the_step() -> None:
    b = Backoff(5, base_s=0.5, cap_s=3.0, jitter="added", rng=random.Random(1))
    for n in range(8):
        step = min(3.0, 0.5 * 2**n)
        assert step <= b.delay(n) <= step + 0.5


def test_both_clients_are_configured_with_the_shared_policy() -> None:
    llm = RetryingLLM(ScriptedLLM({}), max_attempts=4, base_s=0.2, cap_s=2.0)
    assert isinstance(llm.backoff, Backoff) and llm.backoff.jitter == "full"
    assert llm.backoff.attempts == 4
    client = SparqlClient("http://127.0.0.1:9/sparql", retry=RetryPolicy(max_retries=2))
    assert isinstance(client.retry, Backoff) and client.retry.jitter == "added"
    assert client.retry.attempts == 3


def test_negative_retries_are_refused() -> None:
    with pytest.raises(ValueError, match="max_retries"):
        Backoff(-1)
