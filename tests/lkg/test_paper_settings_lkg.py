"""The paper's settings are the defaults and ours are switches (issue 35): the solver prompt
sees only G_final (§3.4, A.2); repairs feed back errors only (§3.4); an unsolved problem
counts wrong unless Logic-LM's random backup is asked for; BM25 reads names only on request
(§4.3's "BM25 entity-name pass")."""

from __future__ import annotations

import pytest
from tests.lkg.test_pipeline_fixtures import (
    HORN_CONTEXT,
    HORN_EXTRACTION,
    HORN_OPTIONS,
    HORN_PROGRAM,
    HORN_QUESTION,
    fenced,
    js,
)

from kgreason.config import load_settings
from kgreason.eval.lkg_scores import lkg_metrics
from kgreason.lkg.backup import backup_letter
from kgreason.lkg.index import LKGIndex
from kgreason.lkg.pipeline import SymbolLKG
from kgreason.lkg.settings import DEFAULT_TAU, LKGSettings
from kgreason.lkg.storage import LKGStore
from kgreason.llm.testing import ScriptedLLM

S = dict(solver_timeout_s=5, solver_memory_mb=512, max_repairs=1)
TWO_WAY = (
    "; mode: could_be_true\n(declare-const x Int)\n(assert (<= 1 x 2))\n"
    "(define-fun option_A () Bool (= x 1))\n(define-fun option_B () Bool (= x 2))\n"
)
TWO_OPTIONS = ["A) x is 1.", "B) x is 2."]
TWO_QUESTION = "Which one of the following could be true?"


def _codegen_prompt(llm: ScriptedLLM) -> str:
    return next(c for c in llm.calls if c.stage == "codegen").messages[0]["content"]


def _horn_llm() -> ScriptedLLM:
    return ScriptedLLM(
        {"lkg_construct": [js(HORN_EXTRACTION)], "*": lambda m: "[]", "route": ["PYKE"],
         "codegen": [fenced(HORN_PROGRAM)]}
    )  # fmt: skip


def test_defaults_are_the_papers():
    s = LKGSettings()
    assert s.include_context is False and s.repair_unusable is False
    assert s.backup_answer == "none" and s.bm25_names_only is False
    assert DEFAULT_TAU == 0.5


def test_switches_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("KGREASON_LKG__INCLUDE_CONTEXT", "true")
    monkeypatch.setenv("KGREASON_LKG__BACKUP_ANSWER", "random")
    monkeypatch.setenv("KGREASON_LKG__REPAIR_UNUSABLE", "true")
    lkg = load_settings(None).settings.lkg
    assert (lkg.include_context, lkg.backup_answer, lkg.repair_unusable) == (True, "random", True)


async def test_solver_prompt_gets_only_the_subgraph_by_default():
    llm = _horn_llm()
    lkg = SymbolLKG(llm, settings=LKGSettings(**S), prune=False)
    assert lkg.include_context is False
    r = await lkg.asolve(HORN_CONTEXT, HORN_QUESTION, HORN_OPTIONS)
    assert r.verdict == "B", r.error
    prompt = _codegen_prompt(llm)
    assert HORN_CONTEXT not in prompt  # the raw context
    assert "(not given: use the logfile)" in prompt
    assert "Wumpuses are not sour." in prompt  # the subgraph's rule is there


async def test_include_context_switch_shows_the_context():
    llm = _horn_llm()
    lkg = SymbolLKG(llm, settings=LKGSettings(**S, include_context=True), prune=False)
    await lkg.asolve(HORN_CONTEXT, HORN_QUESTION, HORN_OPTIONS)
    assert HORN_CONTEXT in _codegen_prompt(llm)
    # the constructor's argument still overrides the setting
    llm2 = _horn_llm()
    await SymbolLKG(llm2, settings=LKGSettings(**S), include_context=True).asolve(
        HORN_CONTEXT, HORN_QUESTION, HORN_OPTIONS
    )
    assert HORN_CONTEXT in _codegen_prompt(llm2)


def _two_way_llm() -> ScriptedLLM:
    return ScriptedLLM(
        {"lkg_construct": [js({"entities": []})], "*": lambda m: "[]", "route": ["Z3"],
         "codegen": [fenced(TWO_WAY, "smt2")], "repair": [fenced(TWO_WAY, "smt2")]}
    )  # fmt: skip


async def test_no_unique_answer_is_not_repaired_by_default():
    llm = _two_way_llm()
    r = await SymbolLKG(llm, settings=LKGSettings(**S)).asolve(
        "x is 1 or 2.", TWO_QUESTION, TWO_OPTIONS, id="p1"
    )
    assert r.status == "unsolved" and len(r.attempts) == 1
    assert "no unique answer" in r.attempts[0].error
    assert not any(c.stage == "repair" for c in llm.calls)


async def test_repair_unusable_switch_repairs_it():
    llm = _two_way_llm()
    r = await SymbolLKG(llm, settings=LKGSettings(**S, repair_unusable=True)).asolve(
        "x is 1 or 2.", TWO_QUESTION, TWO_OPTIONS, id="p1"
    )
    assert [a.stage for a in r.attempts] == ["codegen", "repair"]
    assert "no unique answer" in llm.calls[-1].messages[-1]["content"]


async def test_errors_are_repaired_under_the_paper_default():
    broken = "(declare-const x Int)\n(assert (<= 1 y 2))\n(define-fun goal () Bool (= x 1))\n"
    llm = ScriptedLLM(
        {"lkg_construct": [js({"entities": []})], "*": lambda m: "[]", "route": ["Z3"],
         "codegen": [fenced(broken, "smt2")], "repair": [fenced(broken, "smt2")]}
    )  # fmt: skip
    r = await SymbolLKG(llm, settings=LKGSettings(**S)).asolve("x is 1 or 2.", "Is x 1?")
    assert [a.stage for a in r.attempts] == ["codegen", "repair"]


async def test_backup_none_records_the_letter_it_would_pick():
    r = await SymbolLKG(_two_way_llm(), settings=LKGSettings(**S)).asolve(
        "x is 1 or 2.", TWO_QUESTION, TWO_OPTIONS, id="p1"
    )
    assert r.verdict is None and r.backup is False
    assert r.backup_answer == backup_letter("p1", ["A", "B"])


async def test_backup_random_answers_with_the_seeded_letter():
    r = await SymbolLKG(_two_way_llm(), settings=LKGSettings(**S, backup_answer="random")).asolve(
        "x is 1 or 2.", TWO_QUESTION, TWO_OPTIONS, id="p1"
    )
    assert r.status == "unsolved" and r.backup is True
    assert r.verdict == r.backup_answer == backup_letter("p1", ["A", "B"])
    assert r.to_dict()["backup"] is True


def test_backup_letter_is_deterministic_and_spread():
    letters = ["A", "B", "C", "D", "E"]
    assert backup_letter("ar_lsat_1", letters) == backup_letter("ar_lsat_1", letters)
    picks = {backup_letter(f"q{i}", letters) for i in range(200)}
    assert picks == set(letters)
    counts = [sum(backup_letter(f"q{i}", ["A", "B"]) == "A" for i in range(1000))]
    assert 400 < counts[0] < 600
    assert backup_letter("x", []) is None


def _row(id: str, gold: str, answers: list[str], error_kind: str | None, **extra) -> dict:
    return {"id": id, "dataset": "AR-LSAT", "method": "symbollkg", "gold": gold,
            "answers": answers, "correct": answers[:1] == [gold], "error_kind": error_kind,
            "extra": extra}  # fmt: skip


def test_scores_report_both_backup_settings_from_the_same_rows():
    rows = [
        _row("a", "A", ["A"], None),  # solved, right
        _row("b", "B", ["A"], None),  # solved, wrong
        _row("c", "C", [], "unsolved", backup_answer="C"),  # backup would be right
        _row("d", "D", [], "unsolved", backup_answer="A"),  # backup would be wrong
    ]
    m = lkg_metrics(rows)
    assert m["accuracy_backup_none"] == 25.0
    assert m["accuracy_backup_random"] == 50.0
    assert m["backup_rows"] == 2


def test_scores_of_a_random_backup_run_count_backups_wrong_for_none():
    rows = [
        _row("a", "A", ["A"], None),
        _row("c", "C", ["C"], "unsolved", backup=True),  # answered by the backup
    ]
    m = lkg_metrics(rows)
    assert (m["accuracy_backup_none"], m["accuracy_backup_random"]) == (50.0, 100.0)


def test_scores_leave_random_out_when_rows_lack_the_letter():
    m = lkg_metrics([_row("a", "A", ["A"], None), _row("c", "C", [], "unsolved")])
    assert m["accuracy_backup_none"] == 50.0 and "accuracy_backup_random" not in m


def test_bm25_names_only_switch(tmp_path):
    from kgreason.lkg.construction import extraction_to_graph
    from kgreason.lkg.types import Extraction

    st = LKGStore()
    g = extraction_to_graph(Extraction.model_validate(HORN_EXTRACTION), HORN_CONTEXT)
    st.add_document(HORN_CONTEXT, g)
    full = LKGIndex(st).refresh()
    names = LKGIndex(st, bm25_names_only=True).refresh()
    # "sour" is in a rule's raw text only: the full pass finds the rule, the name pass not
    assert any(full.nodes[i].kind == "rule" for i, _ in full.bm25_search("sour", 5))
    assert all(names.nodes[i].kind in ("entity", "concept") for i in names.bm25_ids)
    assert names.bm25_search("Max", 5) and names.nodes[names.bm25_search("Max", 5)[0][0]].name
    lkg = SymbolLKG(None, settings=LKGSettings(bm25_names_only=True))
    assert lkg.retriever(st, None).index.bm25_names_only is True
    st.close()


@pytest.mark.parametrize("value", ["none", "random"])
def test_eval_backup_option_sets_the_setting(value, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from kgreason.cli import app

    monkeypatch.chdir(tmp_path)
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "KGREASON_CONFIG"):
        monkeypatch.delenv(var, raising=False)
    res = CliRunner().invoke(
        app, ["eval", "nosuchdataset", "--method", "symbollkg", "--backup-answer", value]
    )
    assert "No such option" not in res.output, res.output
    bad = CliRunner().invoke(app, ["eval", "x", "--method", "symbollkg", "--backup-answer", "coin"])
    assert bad.exit_code != 0 and "backup" in bad.output.lower()
