import json
from pathlib import Path

import pytest

from kgreason.eval import rundir
from kgreason.eval.methods import BASELINES, Outcome, parse_final_braces
from kgreason.eval.records import Answer, Record
from kgreason.eval.runner import run
from kgreason.llm.testing import ScriptedLLM


def _records(n: int) -> list[Record]:
    return [
        Record(
            id=f"q{i}",
            dataset="toy",
            task="kgqa",
            question=f"capital of country {i}?",
            answers=[Answer(f"City{i}")],
        )
        for i in range(n)
    ]


def _answer_from_prompt(messages):
    q = messages[-1]["content"].rsplit("Q: ", 1)[1]
    i = int(q.split("country ")[1].split("?")[0])
    # wrong on odd questions, and a reasoning text that mentions the gold (lenient trap)
    return (
        f"So the answer is {{City{i}}}."
        if i % 2 == 0
        else f"Not City{i}. So the answer is {{Nowhere}}."
    )


async def test_io_run_scores_strict_and_lenient(tmp_path: Path):
    llm = ScriptedLLM({"io": _answer_from_prompt})
    s = await run(_records(4), BASELINES["io"](), llm, tmp_path / "r", config={"method": "io"})
    rows = rundir.read_jsonl_tolerant(tmp_path / "r" / "results.jsonl")
    assert [r["id"] for r in rows] == ["q0", "q1", "q2", "q3"]
    assert [r["strict_hit1"] for r in rows] == [True, False, True, False]
    assert [r["lenient_hit"] for r in rows] == [True, True, True, True]
    assert all(r["llm_calls"] == 1 and r["usage"]["io"]["calls"] == 1 for r in rows)
    assert s.computed == 4 and s.errors == 0


async def test_failure_is_recorded_not_fatal(tmp_path: Path):
    def reply(messages):
        if (
            "country 1?" in messages[-1]["content"]
            or "could not be read" in messages[-1]["content"]
        ):
            return "I don't know"
        return _answer_from_prompt(messages)

    llm = ScriptedLLM({"io": reply})
    await run(_records(3), BASELINES["io"](), llm, tmp_path / "r", config={"method": "io"})
    rows = rundir.read_jsonl_tolerant(tmp_path / "r" / "results.jsonl")
    assert rows[1]["error_kind"] == "unparseable_reply"
    assert rows[1]["answers"] == []
    assert rows[0]["error_kind"] is None and rows[2]["error_kind"] is None


async def test_resume_skips_finished_and_drops_torn_line(tmp_path: Path):
    out = tmp_path / "r"
    llm = ScriptedLLM({"io": _answer_from_prompt})
    await run(_records(4), BASELINES["io"](), llm, out, config={"method": "io"})
    full = (out / "results.jsonl").read_text()
    # simulate a kill: two finished lines and a torn third
    lines = full.splitlines(keepends=True)
    (out / "results.jsonl").write_text(lines[0] + lines[2] + lines[1][: len(lines[1]) // 2])
    llm2 = ScriptedLLM({"io": _answer_from_prompt})
    s = await run(_records(4), BASELINES["io"](), llm2, out, config={"method": "io"}, resume=True)
    assert s.done_before == 2 and s.computed == 2
    assert len(llm2.calls) == 2
    assert (out / "results.jsonl").read_text() == full


async def test_refuses_to_overwrite_or_resume_other_run(tmp_path: Path):
    out = tmp_path / "r"
    llm = ScriptedLLM({"io": _answer_from_prompt})
    await run(_records(1), BASELINES["io"](), llm, out, config={"method": "io"})
    with pytest.raises(rundir.RunDirError, match="already holds a run"):
        await run(_records(1), BASELINES["io"](), llm, out, config={"method": "io"})
    with pytest.raises(rundir.RunDirError, match="method"):
        await run(_records(1), BASELINES["io"](), llm, out, config={"method": "cot"}, resume=True)


async def test_self_consistency_votes_with_distinct_samples():
    replies = iter(
        [
            "So the answer is {A}.",
            "So the answer is {B}.",
            "So the answer is {B}.",
            "garbage",
            "So the answer is {A}.",
        ]
    )
    llm = ScriptedLLM({"sc": lambda m: next(replies)})
    rec = Record(id="x", dataset="toy", task="kgqa", question="q?", answers=[Answer("B")])
    out = await BASELINES["sc"]().answer(rec, llm)
    assert out.answers in (["A"], ["B"])
    assert out.extra["votes"] == {"a": 2, "b": 2}
    assert [c.sample for c in llm.calls] == [0, 1, 2, 3, 4]
    assert all(c.temperature == 0.7 for c in llm.calls)


async def test_logic_baseline_letter(tmp_path):
    rec = Record(
        id="l",
        dataset="FOLIO",
        task="logic",
        question="Is it?",
        context="ctx",
        options=["A) True", "B) False", "C) Unknown"],
        label="C",
        answers=[Answer("C")],
    )
    llm = ScriptedLLM({"cot": ["Nothing says so. So the answer is {C) Unknown}."]})
    await run([rec], BASELINES["cot"](), llm, tmp_path / "r", config={"method": "cot"})
    row = rundir.read_jsonl_tolerant(tmp_path / "r" / "results.jsonl")[0]
    assert row["answers"] == ["C"] and row["correct"] is True
    assert "Context: ctx" in llm.calls[0].messages[0]["content"]


def test_parse_final_braces():
    assert parse_final_braces("x {a} then {b}") == "b"
    with pytest.raises(ValueError):
        parse_final_braces("none")


def test_outcome_defaults_are_not_shared():
    a, b = Outcome(), Outcome()
    a.answers.append("x")
    assert b.answers == []
    assert json.dumps(a.extra) == "{}"
