"""The offline tokenizer must load and count without any network access."""

from __future__ import annotations

import socket

import pytest

from kgreason.llm.tokens import TokenCounter


@pytest.fixture
def no_network(monkeypatch, tmp_path):
    def refuse(*args, **kwargs):
        raise AssertionError(f"network access attempted: {args!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    # an empty tiktoken cache, so nothing can come from a previous download
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "tiktoken-cache"))


def test_cl100k_loads_and_counts_offline(no_network):
    tc = TokenCounter()
    # reference ids of cl100k_base ("hello world, how are you?")
    assert tc.encoding.encode("hello world, how are you?") == [
        15339, 1917, 11, 1268, 527, 499, 30,
    ]  # fmt: skip
    assert tc.count_text("") == 0
    assert tc.count_text("<|endoftext|>") > 1  # special-token text is counted as plain text
    msgs = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    assert tc.count_messages(msgs) == 3 + (3 + tc.count_text("Be brief.")) + (3 + 1)
