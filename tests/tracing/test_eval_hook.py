"""The eval runner reports each question through the same hook."""

from __future__ import annotations

from pathlib import Path

from kgreason.eval.methods import BASELINES
from kgreason.eval.records import Answer, Record
from kgreason.eval.runner import run
from kgreason.llm.testing import ScriptedLLM
from kgreason.tracing import StageEvent


async def test_runner_question_events(tmp_path: Path) -> None:
    records = [
        Record(id=f"q{i}", dataset="toy", task="kgqa", question=f"capital of {i}?",
               answers=[Answer(f"City{i}")])
        for i in range(3)
    ]  # fmt: skip

    def reply(messages: list[dict[str, str]]) -> str:  # question 1 (and its re-ask) unreadable
        return "I don't know" if any("of 1?" in m["content"] for m in messages) else "{City0}"

    replies = {"io": reply}
    seen: list[StageEvent] = []
    out = tmp_path / "r"
    await run(records, BASELINES["io"](), ScriptedLLM(replies), out, config={"method": "io"},
              callbacks=[seen.append])  # fmt: skip
    ends = [e for e in seen if e.kind == "end"]
    assert [(e.pipeline, e.stage) for e in ends] == [("eval", "question")] * 3
    assert [e.sizes["id"] for e in ends] == ["q0", "q1", "q2"]
    assert [e.sizes["error_kind"] for e in ends] == [None, "unparseable_reply", None]
    assert all(e.sizes["llm_calls"] >= 1 for e in ends)
