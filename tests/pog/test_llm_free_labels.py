"""One label vocabulary for the LLM-free mode (issue 34): the label names what ranks the
paths, so the same setup reads the same on success and on error, in the CLI's text and
JSON, the HTTP service, MCP and `serve`'s banner (the explorer shows the reply's label)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import kgreason
from kgreason.cli import app
from kgreason.pog.labels import (
    JOIN_NOTE,
    RANKER_LABEL,
    RANKER_NOTE,
    SIMILARITY_LABEL,
    ZERO_SHOT_LABEL,
)

runner = CliRunner()


@pytest.fixture
def no_llm(monkeypatch):
    for v in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "KGREASON_LLM__BASE_URL"):
        monkeypatch.delenv(v, raising=False)


def _ask(*args: str) -> dict:
    r = runner.invoke(app, ["ask", *args, "--json"])
    return json.loads(r.stdout)


def test_bundled_ranker_success_and_error_share_one_label(no_llm):
    ok = _ask("who directed [Once Were Warriors]")
    bad = _ask("who directed [Zqxv Film That Does Not Exist]")
    assert ok["answers"] and not bad["ok"]
    assert ok["label"] == bad["label"] == RANKER_LABEL


def test_the_trace_note_names_the_ranker_when_it_chose(no_llm):
    ok = _ask("who directed [Once Were Warriors]")
    notes = [t["note"] for t in ok["trace"] if t.get("stage") in ("llm-free", "ranker")]
    assert notes and all(n == RANKER_NOTE for n in notes)
    assert not any("most similar" in n for n in notes)


def test_similarity_ranking_says_candidates_on_success_and_error(no_llm, tmp_path):
    src = tmp_path / "kg.tsv"
    src.write_text("alpha\tknows\tbeta\nbeta\tlikes\tgamma\n", encoding="utf-8")
    kg = tmp_path / "store"
    assert runner.invoke(app, ["kg", "build", str(src), "--out", str(kg)]).exit_code == 0
    similarity = ("--kg", str(kg), "--ranker", "none")
    ok = _ask("who does [alpha] know", *similarity)
    bad = _ask("who does [omega] know", *similarity)
    assert ok["ok"] and not ok["answers"] and ok["candidates"]
    assert ok["label"] == bad["label"] == SIMILARITY_LABEL
    text = runner.invoke(app, ["ask", "who does [alpha] know", *similarity]).stdout
    assert SIMILARITY_LABEL in text


def test_a_kg_no_ranker_was_trained_on_gets_a_zero_shot_answer(no_llm, tmp_path):
    """pog.ranker = auto there: the order-aligned ranking answers, labelled zero-shot, on
    success and error alike."""
    src = tmp_path / "kg.tsv"
    src.write_text("alpha\tknows\tbeta\nbeta\tlikes\tgamma\n", encoding="utf-8")
    kg = tmp_path / "store"
    assert runner.invoke(app, ["kg", "build", str(src), "--out", str(kg)]).exit_code == 0
    ok = _ask("who does [alpha] know", "--kg", str(kg))
    bad = _ask("who does [omega] know", "--kg", str(kg))
    assert ok["ok"] and [a["name"] for a in ok["answers"]] == ["beta"]
    assert ok["label"] == bad["label"] == ZERO_SHOT_LABEL
    text = runner.invoke(app, ["ask", "who does [alpha] know", "--kg", str(kg)]).stdout
    assert ZERO_SHOT_LABEL in text and "Answer: beta" in text


def test_the_zero_shot_ranking_does_not_answer_a_join(no_llm, tmp_path):
    """Two topic entities: the top path joins them, and which entity on it is asked for is
    not what word-to-hop alignment can tell; the path's entities lead the candidates, the
    answer is "no confident answer", with the reason (the Nijmegen question on Virtuoso
    answered all 8 entities on a 6-hop join before)."""
    src = tmp_path / "kg.tsv"
    src.write_text("alpha\tknows\tbeta\nbeta\tlikes\tgamma\n", encoding="utf-8")
    kg = tmp_path / "store"
    assert runner.invoke(app, ["kg", "build", str(src), "--out", str(kg)]).exit_code == 0
    r = _ask("who does [alpha] know that likes [gamma]", "--kg", str(kg))
    assert r["ok"] and r["answers"] == [] and r["abstained"]
    assert r["candidates"][0]["name"] == "beta" and r["label"] == ZERO_SHOT_LABEL
    assert [t["note"] for t in r["trace"] if t.get("stage") == "ranker"] == [JOIN_NOTE]
    text = runner.invoke(app, ["ask", "who does [alpha] know that likes [gamma]", "--kg", str(kg)])
    assert "no confident answer (the top path joins several topic entities" in text.stdout


def test_text_output_shows_the_same_label(no_llm):
    r = runner.invoke(app, ["ask", "who directed [Once Were Warriors]"])
    assert RANKER_LABEL in r.stdout


def test_the_service_and_the_banner_agree(no_llm):
    from kgreason.server.models import AskRequest
    from kgreason.server.service import Service

    svc = Service.from_settings(kgreason.Settings(), llm_free=True)
    try:
        ok = kgreason.run_sync(svc.ask(AskRequest(question="who directed [Once Were Warriors]")))
        assert ok["label"] == RANKER_LABEL == svc.llm_free_label
    finally:
        kgreason.run_sync(svc.aclose())


def test_mcp_falls_back_to_the_same_vocabulary():
    from kgreason.server.mcp_models import ask_output

    out = ask_output({"mode": "llm-free", "question": "q"}, "rid", max_paths=1)
    assert out.label == SIMILARITY_LABEL
