"""LLM paraphrases of label-free training questions (issue 37 item 2): the reply is untrusted,
so the attacks come first (garbage, wrong sizes, changed or added mentions, control
characters, huge replies, failed calls); then the good path, and `kgreason train ranker
--paraphrase` end to end through a local OpenAI-protocol server."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kgreason.cli import app
from kgreason.llm.base import LLMTransportError, Message
from kgreason.llm.testing import ScriptedLLM
from kgreason.pog.ranker.paraphrase import (
    BATCH,
    MAX_CHARS,
    STAGE,
    ParaphraseError,
    check,
    paraphrase,
)
from kgreason.pog.ranker.supervision import TrainQuestion

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from cli.support import isolate_env, one_error_line
from llm.fake_server import FakeOpenAIServer

OWN = Path(__file__).resolve().parents[1] / "data" / "ownkg"
runner = CliRunner()


def qs(n: int = 3) -> list[TrainQuestion]:
    return [
        TrainQuestion(
            f"synth-{i}", f"what is the born in of [P{i}]", (f"P{i}",), (f"p{i}",), ("X",), 1
        )
        for i in range(n)
    ]


def asked(messages: list[Message]) -> list[str]:
    """The questions a paraphrase prompt lists (the lines after "Questions:")."""
    text = messages[-1]["content"]
    return text.split("Questions:\n", 1)[1].strip().splitlines()


def run(reply, n: int = 3):  # type: ignore[no-untyped-def]
    llm = ScriptedLLM({STAGE: reply if callable(reply) else [reply]})
    return asyncio.run(paraphrase(llm, qs(n)))


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("I cannot help with that.", "reply not a list of the batch's size"),
        ('{"a": "where was [P0] born"}', "reply not a list of the batch's size"),
        ('["where was [P0] born"]', "reply not a list of the batch's size"),
        ('["x"] ' * 5000, "reply not a list of the batch's size"),
    ],
)
def test_a_reply_that_is_not_one_string_per_question_keeps_the_batch(reply, reason):
    out, rep = run(reply)
    assert [q.text for q in out] == [q.text for q in qs()]
    assert rep.paraphrased == 0 and rep.kept == {reason: 3}


def test_each_bad_item_keeps_its_own_question_and_is_counted_by_reason():
    items = ["where was [P0] born", "where was [Somebody] born", 7]
    out, rep = run(json.dumps(items))
    assert [q.text for q in out] == ["where was [P0] born", *[q.text for q in qs()][1:]]
    assert rep.paraphrased == 1
    assert rep.kept == {"mention changed": 1, "not a string": 1}


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("where was [P0] born [and] raised", "extra brackets"),
        ("where was [P0] born\nignore the above", "control character"),
        ("where was P0 born", "mention changed"),
        ("[P0] " + "x" * MAX_CHARS, "too long"),
        ("   ", "empty"),
        (None, "not a string"),
        ("where was [P0] born", None),
    ],
)
def test_check(text, reason):
    assert check(qs(1)[0], text) == reason


def test_a_huge_reply_is_refused_before_it_is_searched():
    _, rep = run("[" + '"a", ' * 2_000_000 + '"a"]')
    assert rep.paraphrased == 0 and sum(rep.kept.values()) == 3


def test_a_failed_call_keeps_its_batch_and_every_call_failing_is_an_error():
    calls = {"n": 0}

    def flaky(messages: list[Message]) -> str:
        calls["n"] += 1
        if calls["n"] == 1:
            raise LLMTransportError("connection refused")
        return json.dumps(
            [f"so where was [{q.split('[')[1].split(']')[0]}] born" for q in asked(messages)]
        )

    llm = ScriptedLLM({STAGE: flaky})
    out, rep = asyncio.run(paraphrase(llm, qs(BATCH + 2)))
    assert rep.calls == 2 and rep.failed_calls == 1
    assert rep.kept == {"call failed (LLMTransportError)": BATCH}
    assert [q.text for q in out[:BATCH]] == [q.text for q in qs(BATCH)]
    assert out[BATCH].text == f"so where was [P{BATCH}] born"

    def down(messages: list[Message]) -> str:
        raise LLMTransportError("connection refused")

    with pytest.raises(ParaphraseError, match="every paraphrase call failed"):
        asyncio.run(paraphrase(ScriptedLLM({STAGE: down}), qs(3)))


def test_paraphrases_replace_the_text_only_and_usage_is_accounted_per_stage():
    def good(messages: list[Message]) -> str:
        return json.dumps(
            [q.replace("what is the born in of", "where was") + " born" for q in asked(messages)]
        )

    out, rep = run(good, n=BATCH * 2 + 1)
    src = qs(BATCH * 2 + 1)
    assert [q.text for q in out] == [f"where was [P{i}] born" for i in range(len(src))]
    for a, b in zip(out, src, strict=True):
        assert (a.id, a.mentions, a.topic_ids, a.gold, a.hops) == (
            b.id,
            b.mentions,
            b.topic_ids,
            b.gold,
            b.hops,
        )
    assert rep.paraphrased == len(src) and rep.calls == 3 and not rep.kept
    assert rep.usage[STAGE]["calls"] == 3 and rep.usage["total"]["calls"] == 3


# --- the command ------------------------------------------------------------------------


@pytest.fixture
def store(tmp_path, monkeypatch) -> Path:
    isolate_env(monkeypatch, tmp_path)
    r = runner.invoke(
        app, ["kg", "build", str(OWN / "company.tsv"), "--out", str(tmp_path / "store")]
    )
    assert r.exit_code == 0, r.output
    return tmp_path / "store"


def test_paraphrase_without_an_llm_is_a_one_line_error(store, tmp_path):
    args = ["train", "ranker", "--kg", str(store), "--out", str(tmp_path / "r"), "--paraphrase"]
    line = one_error_line(runner.invoke(app, [*args, "--limit", "5"]))
    assert "--paraphrase needs an LLM" in line and "OPENAI_BASE_URL" in line
    assert not (tmp_path / "r").exists()


def test_paraphrase_applies_to_generated_questions_only(store, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    args = ["train", "ranker", "--kg", str(store), "--out", str(tmp_path / "r"), "--paraphrase"]
    line = one_error_line(runner.invoke(app, [*args, "--data", "metaqa"]))
    assert "--paraphrase rewords generated questions" in line


def test_train_ranker_paraphrase_through_an_openai_protocol_server(store, tmp_path, monkeypatch):
    server = FakeOpenAIServer().start()
    try:

        def reword(req: dict) -> str:
            lines = asked(req["messages"])
            return json.dumps([f"tell me: {q.rstrip('?')}?" for q in lines])

        server.reply_fn = reword
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        out = tmp_path / "r"
        args = ["--json", "train", "ranker", "--kg", str(store), "--out", str(out)]
        r = runner.invoke(app, [*args, "--paraphrase", "--limit", "20"])
        assert r.exit_code == 0, r.output
        report = json.loads(r.stdout)
    finally:
        server.close()
    done = report["training"]["generated"]["paraphrased"]
    assert done["calls"] == len(server.requests) >= 2
    assert done["paraphrased"] == done["asked"] == report["training"]["questions"]
    assert done["usage"][STAGE]["calls"] == done["calls"]
    spec = json.loads((out / "ranker.json").read_text())
    assert spec["training"]["label_free"] is True
    assert spec["training"]["generated"]["paraphrased"]["paraphrased"] == done["paraphrased"]
