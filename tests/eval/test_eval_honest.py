"""Issue 34: an evaluation leaves out (or flags) the questions its path ranker was trained
on, and says what it evaluated. Synthetic records and artefacts only: no shared data."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from kgreason.eval import rundir
from kgreason.eval.describe import run_fields, trained_note
from kgreason.eval.methods import Outcome
from kgreason.eval.records import Answer, Record
from kgreason.eval.runner import run
from kgreason.eval.selection import parse_hops, select, trained_config
from kgreason.eval.trained import (
    RankerUse,
    TrainedSetError,
    question_hash,
    read_questions,
    write_questions,
)

SPEC = {"training": {"fingerprint": "fp-1", "dataset": "metaqa", "split": "dev"}}


def rec(i: int, hops: int = 1) -> Record:
    q = f"what films did [person {i}] act in"
    return Record(f"metaqa-{hops}hop-{i}", "metaqa", "kgqa", q, [Answer("x")], hops=hops)


def artefact(tmp_path: Path, trained: list[Record], dropped: list[Record] = ()) -> RankerUse:
    write_questions(
        tmp_path,
        [r.question for r in trained],
        fingerprint="fp-1",
        source="metaqa, dev",
        dropped=[r.question for r in dropped],
    )
    got = read_questions(tmp_path, SPEC)
    return RankerUse("test ranker (mlp)", str(tmp_path), "metaqa, dev", got)


def test_training_questions_round_trip_by_text(tmp_path: Path) -> None:
    records = [rec(i) for i in range(10)]
    use = artefact(tmp_path, records[:4], records[4:5])
    assert use.trained is not None and use.trained.questions == 4
    assert records[0] in use.trained and records[4] not in use.trained  # dropped: not trained
    assert use.trained.drawn(records[4]) and not use.trained.drawn(records[5])
    # the same question in another file, case and spacing aside, is the same question
    other = Record("elsewhere-7", "metaqa", "kgqa", "  WHAT films did  [person 2] act in ")
    assert other in use.trained
    assert question_hash("a b") == question_hash("A  b") != question_hash("a c")


def test_a_file_of_another_training_set_is_refused(tmp_path: Path) -> None:
    assert read_questions(tmp_path, SPEC) is None  # no record: None, not an error
    write_questions(tmp_path, ["q"], fingerprint="fp-OTHER", source="s")
    with pytest.raises(TrainedSetError, match="training set"):
        read_questions(tmp_path, SPEC)
    (tmp_path / "training_questions.json").write_text('{"format": "x"}')
    with pytest.raises(TrainedSetError, match="not a"):
        read_questions(tmp_path, SPEC)


def test_exclusion_comes_before_the_limit(tmp_path: Path) -> None:
    records = [rec(i) for i in range(1, 41)]
    use = artefact(tmp_path, records[:10], records[10:12])
    sel = select(records, use, include_trained=False, sample=None, seed=0, limit=20)
    assert len(sel.records) == 20  # 20 questions the ranker never saw, not 20 minus overlap
    assert sel.records == records[12:32]
    assert (sel.excluded, sel.excluded_trained, sel.trained_in_run) == (12, 10, 0)
    cfg = trained_config(sel, use)
    assert cfg == {
        "policy": "exclude", "loaded": 40, "excluded": 12, "excluded_trained": 10,
        "in_run": 0, "evaluated": 20,
    }  # fmt: skip
    note, warn = trained_note({"trained_questions": cfg}) or ("", True)
    assert "excluded 12 questions: 10 the ranker was trained on and 2" in note and not warn

    kept = select(records, use, include_trained=True, sample=None, seed=0, limit=20)
    assert kept.records == records[:20] and kept.trained_in_run == 10 and kept.excluded == 0
    note, warn = trained_note({"trained_questions": trained_config(kept, use)}) or ("", False)
    assert warn and note.startswith("WARNING: 10 of 20 questions") and "flatter" in note


def test_sample_is_drawn_from_the_held_out_questions(tmp_path: Path) -> None:
    records = [rec(i) for i in range(100)]
    use = artefact(tmp_path, records[:50])
    sel = select(records, use, include_trained=False, sample=30, seed=1, limit=None)
    assert len(sel.records) == 30
    assert not any(use.trained.drawn(r) for r in sel.records)  # type: ignore[union-attr]


def test_no_record_of_training_questions_is_a_warning_not_silence() -> None:
    use = RankerUse("r", "/x", "metaqa, dev", None, "its artefact does not record them")
    sel = select([rec(1)], use, include_trained=False, sample=None, seed=0, limit=None)
    assert sel.records == [rec(1)] and sel.policy is None
    note, warn = trained_note({"trained_questions": trained_config(sel, use)}) or ("", False)
    assert warn and "not checked" in note and "does not record" in note
    # a ranker that was not trained (SBERT, zero-shot) has no training questions to speak of
    assert trained_config(sel, RankerUse("none (SBERT similarity)")) is None


def test_several_hops_limit_per_hop(tmp_path: Path) -> None:
    records = [rec(i, h) for h in (1, 2, 3) for i in range(10)]
    sel = select(records, None, include_trained=False, sample=None, seed=0, limit=3, per_hop=True)
    assert [r.hops for r in sel.records] == [1, 1, 1, 2, 2, 2, 3, 3, 3]
    one = select(records, None, include_trained=False, sample=None, seed=0, limit=3)
    assert one.records == records[:3]  # one hop count (or a mixed file): the first N


def test_hops_parsing_and_default() -> None:
    assert parse_hops("metaqa", None) == ([1], True)
    assert parse_hops("pq", None) == ([2], True)
    assert parse_hops("metaqa", "1,2,3") == ([1, 2, 3], False)
    assert parse_hops("metaqa", "all") == ([1, 2, 3], False)
    assert parse_hops("metaqa", 2) == ([2], False)  # a recorded (replayed) value
    assert parse_hops("cwq", "2") == (None, False)  # not split by hops
    with pytest.raises(ValueError, match="1, 2, 3-hop"):
        parse_hops("metaqa", "4")
    with pytest.raises(ValueError, match="expected"):
        parse_hops("metaqa", "one")


class Echo:
    name = "echo"

    async def answer(self, record: Record, llm: object) -> Outcome:
        return Outcome(answers=["x"], output_text="x")


def test_resume_keeps_the_trained_question_policy(tmp_path: Path) -> None:
    records = [rec(i) for i in range(3)]
    base = {"dataset": "metaqa", "split": "dev", "hops": 1, "method": "echo"}
    excluded = {**base, "trained_questions": {"policy": "exclude"}}
    asyncio.run(run(records[:1], Echo(), None, tmp_path, config=excluded))
    with pytest.raises(rundir.RunDirError, match="excluded the questions the ranker"):
        asyncio.run(run(records, Echo(), None, tmp_path, config=base, resume=True))
    done = asyncio.run(run(records, Echo(), None, tmp_path, config=excluded, resume=True))
    assert done.computed == 2


def test_resume_of_a_run_that_recorded_none_for_defaults(tmp_path: Path) -> None:
    """Runs before issue 34 wrote split/hops null for the defaults; they still resume."""
    records = [rec(i) for i in range(2)]
    old = {"dataset": "metaqa", "split": None, "hops": None, "method": "echo"}
    asyncio.run(run(records[:1], Echo(), None, tmp_path, config=old))
    new = {**old, "split": "dev", "hops": 1, "defaulted": ["split", "hops"]}
    assert asyncio.run(run(records, Echo(), None, tmp_path, config=new, resume=True)).computed == 1
    chosen = {**new, "hops": 2, "defaulted": []}  # --hops 2 is not what that run ran
    with pytest.raises(rundir.RunDirError, match="hops"):
        asyncio.run(run(records, Echo(), None, tmp_path, config=chosen, resume=True))
    assert json.loads((tmp_path / "config.json").read_text())["hops"] == 1


CONFIGS = {
    "llm-free, defaults": {
        "dataset": "metaqa", "split": "dev", "hops": 1, "defaulted": ["split", "hops"],
        "method": "llm-free", "model": None, "limit": 20,
        "ranker": {"label": "bundled MetaQA path ranker (mlp)", "trained_on": "metaqa, dev"},
    },
    "before issue 34": {"dataset": "metaqa", "split": None, "hops": None, "method": "llm-free",
                        "model": None, "limit": None},
    "pog on cwq, sampled": {"dataset": "cwq", "split": "test", "hops": None, "method": "pog",
                            "model": "gpt-x", "sample": 1000, "seed": 0, "ranker": None},
    "a dataset file": {"dataset": "/data/PQ-2H.txt", "split": None, "method": "io",
                       "model": "m", "ranker": None},
    "odd types": {"dataset": 3, "hops": {"a": 1}, "defaulted": "hops", "ranker": 5,
                  "trained_questions": "yes"},
}  # fmt: skip


@pytest.mark.parametrize("name", CONFIGS)
def test_run_fields_are_never_blank(name: str) -> None:
    fields = dict(run_fields(CONFIGS[name]))
    assert list(fields) == ["dataset", "split", "hops", "method", "LLM", "ranker", "sample"]
    for k, v in fields.items():
        assert v.strip() and v.strip() not in ("None", "none", "?"), (k, v)


def test_run_fields_say_what_ran() -> None:
    f = dict(run_fields(CONFIGS["llm-free, defaults"]))
    assert f["hops"] == "1 (default; pass --hops 1,2,3 for all)"
    assert f["split"] == "dev (default)" and f["LLM"] == "no LLM (LLM-free mode)"
    assert f["ranker"] == "bundled MetaQA path ranker (mlp), trained on metaqa, dev"
    assert f["sample"] == "first 20"
    old = dict(run_fields(CONFIGS["before issue 34"]))
    assert old["hops"].startswith("1 (default") and old["ranker"] == "not recorded"
    assert old["sample"] == "all" and old["split"] == "dev (default)"
    cwq = dict(run_fields(CONFIGS["pog on cwq, sampled"]))
    assert cwq["hops"] == "n/a (not split by hops)" and cwq["LLM"] == "gpt-x"
    assert cwq["sample"] == "random 1000 (seed 0)" and cwq["ranker"].startswith("n/a")
    several = dict(run_fields({"dataset": "metaqa", "hops": [1, 2, 3], "limit": 5}))
    assert several["hops"] == "1, 2, 3" and several["sample"] == "first 5 per hop"
    assert trained_note(CONFIGS["odd types"]) == (
        "WARNING: unreadable record of the ranker's training questions: 'yes'",
        True,
    )
