from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgreason.llm import (
    CachedLLM,
    RecordingLLM,
    ReplayLLM,
    TranscriptError,
    TranscriptMismatch,
)
from kgreason.llm.testing import ScriptedLLM

Q1 = [{"role": "user", "content": "Who wrote Hamlet?"}]
Q2 = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Capital of Peru?"}]


def fields(c):
    return (c.text, c.usage, c.model)


async def run(llm):
    """A small 'run': two stages, a repeated identical request, and two samples."""
    return [
        await llm.complete(Q1, stage="answer"),
        await llm.complete(Q2, stage="explore", temperature=0.4, sample=0),
        await llm.complete(Q2, stage="explore", temperature=0.4, sample=1),
        await llm.complete(Q1, stage="answer"),
        await llm.complete(Q2, stage="reason", temperature=0, max_tokens=None),
    ]


async def test_record_then_replay_gives_identical_completions(tmp_path: Path):
    path = tmp_path / "run.jsonl"
    real = ScriptedLLM({"answer": ["Shakespeare", "W. Shakespeare"], "*": lambda m: "Lima"})
    recorded = await run(RecordingLLM(real, path))
    lines = path.read_text().splitlines()
    assert len(lines) == 5
    first = json.loads(lines[0])
    assert first["stage"] == "answer"
    assert first["request"] == {
        "messages": Q1,
        "temperature": 0.0,
        "max_tokens": 256,
        "sample": 0,
        "model": "scripted",
    }
    assert first["response"]["text"] == "Shakespeare"
    assert first["usage"]["completion_tokens"] == recorded[0].usage.completion_tokens

    replay = ReplayLLM(path)
    replayed = await run(replay)
    assert [fields(c) for c in replayed] == [fields(c) for c in recorded]
    # identical requests are answered in recorded order (multiplicity kept)
    assert [replayed[0].text, replayed[3].text] == ["Shakespeare", "W. Shakespeare"]
    assert replay.remaining() == 0


async def test_unmatched_request_raises(tmp_path: Path):
    path = tmp_path / "run.jsonl"
    await RecordingLLM(ScriptedLLM({"*": ["Lima"]}), path).complete(Q2, stage="s")
    replay = ReplayLLM(path)
    with pytest.raises(TranscriptMismatch, match="stage 'x'"):
        await replay.complete(Q2, stage="x", sample=1)  # different sample index
    with pytest.raises(TranscriptMismatch):
        await replay.complete(Q1, stage="s")
    assert (await replay.complete(Q2, stage="s")).text == "Lima"
    with pytest.raises(TranscriptMismatch):  # used up
        await replay.complete(Q2, stage="s")


async def test_cache_hits_are_recorded_too(tmp_path: Path):
    path = tmp_path / "run.jsonl"
    inner = ScriptedLLM({"*": ["Lima"]})
    llm = RecordingLLM(CachedLLM(inner, tmp_path / "c.sqlite"), path)
    await llm.complete(Q2, stage="s")
    await llm.complete(Q2, stage="s")
    recs = [json.loads(x) for x in path.read_text().splitlines()]
    assert [r["cached"] for r in recs] == [False, True]
    replay = ReplayLLM(path)
    assert [(await replay.complete(Q2, stage="s")).text for _ in range(2)] == ["Lima", "Lima"]


async def test_failed_calls_are_not_recorded(tmp_path: Path):
    path = tmp_path / "run.jsonl"
    llm = RecordingLLM(ScriptedLLM({}), path)
    with pytest.raises(Exception, match="no scripted reply"):
        await llm.complete(Q1, stage="s")
    assert not path.exists()


def test_bad_transcript_names_file_and_line(tmp_path: Path):
    path = tmp_path / "bad.jsonl"
    good = {
        "stage": "s",
        "request": {"messages": Q1, "temperature": 0, "max_tokens": 5, "sample": 0, "model": "m"},
        "response": {"text": "x"},
        "usage": {},
    }
    path.write_text(json.dumps(good) + "\n\n" + '{"stage": "s", "response": {}}\n')
    with pytest.raises(TranscriptError, match=r"bad\.jsonl:3"):
        ReplayLLM(path)
    with pytest.raises(TranscriptError, match="cannot read"):
        ReplayLLM(tmp_path / "missing.jsonl")
