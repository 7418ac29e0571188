"""`--embedder` on ask, eval and lkg: reaches `embed.backend`, over the environment."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import kgreason.embed.factory as factory
from kgreason.cli import app
from kgreason.embed.errors import EmbedderError

runner = CliRunner()


@pytest.fixture(autouse=True)
def env(monkeypatch, tmp_path):
    for k in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "KGREASON_CONFIG"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("KGREASON_EMBED__BACKEND", "static")
    monkeypatch.setenv("KGREASON_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)


@pytest.mark.parametrize(
    "argv",
    [
        ["ask", "who directed [Kismet]"],
        ["eval", "metaqa", "--hops", "1", "--limit", "1", "--method", "llm-free"],
        ["lkg", "build", "doc.txt", "--out", "lkg"],
        ["lkg", "query", "lkg", "Is Max sour?"],
    ],
)
def test_unknown_embedder_is_one_line_naming_the_setting(argv: list[str], tmp_path: Path):
    (tmp_path / "doc.txt").write_text("Max is sour.")
    r = runner.invoke(app, [*argv, "--embedder", "word2vec"])
    assert r.exit_code != 0
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "embed.backend" in lines[0] and "command line" in lines[0], lines


@pytest.mark.parametrize("backend", ["minilm", "static", "sbert", "sentence-transformers"])
def test_ask_builds_the_named_embedder(backend: str, monkeypatch):
    seen: list[str] = []

    def record(s):
        seen.append(s.backend)
        raise EmbedderError("stopped by the test")

    monkeypatch.setattr(factory, "build_embedder", record)
    r = runner.invoke(app, ["ask", "who directed [Kismet]", "--embedder", backend])
    assert seen == [backend]  # the flag wins over KGREASON_EMBED__BACKEND=static
    assert r.exit_code != 0 and "stopped by the test" in r.stderr


def test_help_lists_the_backends():
    r = runner.invoke(app, ["ask", "--help"])
    assert "--embedder" in r.stdout and "sbert" in r.stdout
