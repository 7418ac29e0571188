"""A zero-shot ranking's confidence is a calibrated probability (issue 37 item 4), not the
softmax of scores that are no logits: it reads the ranked paths' signals, and on the
company KG it trusts the answers to its own questions more than answers to questions whose
answer the KG does not hold."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kgreason.cli import app
from kgreason.pog.fuzzy import ScoredPath
from kgreason.pog.ranker.calibration import ORDER_ALIGNED, SIGNALS, Calibration, signals
from kgreason.pog.types import Hop, ReasoningPath

OWN = Path(__file__).resolve().parents[1] / "data" / "ownkg"
runner = CliRunner()
pytestmark = pytest.mark.usefixtures("llm_free_env")


def _path(n_hops: int) -> ReasoningPath:
    hops = tuple(Hop(("a",), f"r{i}", ("b",), True, ()) for i in range(n_hops))
    return ReasoningPath(hops, ("a",))


def test_signals_read_the_ranked_scores_and_the_top_path():
    ranked = [ScoredPath(_path(2), 1.5, ""), ScoredPath(_path(1), 1.0, "")]
    scal = {"align_assign": 0.4, "align_word_min": 0.1, "word_count": 3.0}
    sig = signals(ranked, scal, answers=4)
    assert set(sig) == set(SIGNALS)
    assert sig["top"] == 1.5 and sig["gap"] == 0.5 and sig["hops"] == 2 and sig["align"] == 0.4
    assert sig["lead3"] == 0.5 and sig["word_min"] == 0.1 and sig["words"] == 3.0
    assert sig["answers"] == pytest.approx(math.log(5))
    assert sig["softmax"] == pytest.approx(1 / (1 + math.exp(-0.5)))
    more = [*ranked, ScoredPath(_path(1), 0.5, ""), ScoredPath(_path(3), 0.0, "")]
    assert signals(more, None)["lead3"] == pytest.approx(1.0)
    assert signals(ranked, None)["align"] == 0.0  # an opaque relation: no alignment
    assert signals([], None) == dict.fromkeys(SIGNALS, 0.0)


def test_a_calibration_names_the_signals_it_reads():
    with pytest.raises(ValueError, match="mismatched"):
        Calibration(weights=(1.0,), bias=0.0, mean=(0.0,), std=(1.0,), names=("nope",))
    with pytest.raises(ValueError, match="mismatched"):
        Calibration(weights=(1.0, 2.0), bias=0.0, mean=(0.0,), std=(1.0,), names=("top",))
    assert set(ORDER_ALIGNED.names) <= set(SIGNALS)


def test_a_clearer_lead_and_alignment_mean_more_confidence():
    """A top path that leads clearly and whose hops and words pair up well (each of those
    signals a standard deviation above the fitted slices' mean) is trusted more than one a
    standard deviation below, and the middle is in between."""
    cal = ORDER_ALIGNED
    mean = dict(zip(cal.names, cal.mean, strict=True))
    std = dict(zip(cal.names, cal.std, strict=True))
    clear = ("softmax", "top", "gap", "lead3", "align", "hop_mean", "hop_min", "word_cov")
    clear += ("word_min",)

    def at(k: float) -> float:
        return cal({n: mean[n] + (k * std[n] if n in clear else 0.0) for n in cal.names})

    assert 0.0 < at(-1.0) < at(0.0) < at(1.0) < 1.0
    assert at(1.0) > 0.9 and at(-1.0) < 0.5


@pytest.fixture(scope="module")
def company(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("kg") / "company"
    r = runner.invoke(app, ["kg", "build", str(OWN / "company.tsv"), "--out", str(out)])
    assert r.exit_code == 0, r.stderr
    return out


def _confidence(question: str, store: Path) -> tuple[bool, float]:
    r = runner.invoke(app, ["ask", question, "--kg", str(store), "--json"])
    data = json.loads(r.stdout)
    rec = next(t for t in data["trace"] if t.get("stage") == "ranker")
    return bool(data["answers"]), rec["confidence"]


def test_answerable_questions_get_more_confidence_than_out_of_kg_ones(company):
    lines = (OWN / "questions.tsv").read_text().splitlines()
    answerable = [ln.split("\t")[0] for ln in lines if ln and not ln.startswith("#")]
    outside = [
        ln for ln in (OWN / "out_of_kg_company.txt").read_text().splitlines()
        if ln and not ln.startswith("#")
    ]  # fmt: skip
    ins = [_confidence(q, company)[1] for q in answerable]
    outs = [_confidence(q, company)[1] for q in outside]
    # every answerable question outranks most out-of-KG ones (pairwise: an AUROC)
    pairs = sum(i > o for i in ins for o in outs) / (len(ins) * len(outs))
    assert pairs >= 0.85, (sorted(ins), sorted(outs))
    # and as probabilities: most of the right answers above one half, most others below
    assert sum(i > 0.5 for i in ins) >= 10 and sum(o < 0.5 for o in outs) >= 15


def test_below_the_confidence_threshold_the_zero_shot_ranking_abstains(company, monkeypatch):
    from kgreason.pog.labels import LOW_CONFIDENCE_NOTE

    q = "who founded [Globex]"
    monkeypatch.setenv("KGREASON_POG__LLM_FREE_CONFIDENCE_BELOW", "0.0")
    answered, conf = _confidence(q, company)
    assert answered and 0.5 < conf < 1.0
    monkeypatch.setenv("KGREASON_POG__LLM_FREE_CONFIDENCE_BELOW", str(conf + 0.01))
    r = json.loads(runner.invoke(app, ["ask", q, "--kg", str(company), "--json"]).stdout)
    rec = next(t for t in r["trace"] if t.get("stage") == "ranker")
    assert r["answers"] == [] and r["abstained"] and rec["note"] == LOW_CONFIDENCE_NOTE
    assert r["candidates"][0]["name"] == "Carl Voss"
    text = runner.invoke(app, ["ask", q, "--kg", str(company)]).stdout
    assert "calibrated confidence" in text and "no confident answer" in text
