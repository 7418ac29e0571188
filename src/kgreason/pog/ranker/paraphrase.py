"""LLM paraphrases of label-free training questions (`kgreason train ranker --paraphrase`).

Why: generated questions name their relations literally ("what is the born in of [X]"),
and a ranker trained on them learns those words; users ask "where was [X] born". With an
LLM configured, each generated question is rewritten as a person would ask it. Its answers
stay those of the KG walk that generated it: the LLM only rewords, it never labels.

The reply is untrusted: a batch's reply must be a JSON array with one string per question,
and each string a single line of at most MAX_CHARS characters that keeps every `[mention]`
exactly and adds no other bracket. Anything else keeps the generated question and is
counted by reason. A failed call keeps its batch; only when every call fails is it an
error (the endpoint is down or misconfigured, and training without the asked-for
paraphrases would say nothing).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from kgreason.llm.base import ChatLLM, LLMError
from kgreason.llm.parse import ParseError, extract_json
from kgreason.llm.usage import MeteredLLM, UsageLedger
from kgreason.pog.ranker.supervision import TrainQuestion
from kgreason.prompts import load_prompt

#: the stage every paraphrase call names (usage is accounted under it)
STAGE = "ranker-paraphrase"
#: questions per call
BATCH = 20
#: longest paraphrase kept, in characters (a generated question is under ~150)
MAX_CHARS = 300


class ParaphraseError(LLMError):
    """Every paraphrase call failed: nothing was paraphrased."""


@dataclass
class ParaphraseReport:
    asked: int = 0
    paraphrased: int = 0
    #: questions kept as generated, by reason
    kept: Counter[str] = field(default_factory=Counter)
    calls: int = 0
    failed_calls: int = 0
    model: str = ""
    usage: dict[str, dict[str, float]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "asked": self.asked,
            "paraphrased": self.paraphrased,
            "kept": dict(sorted(self.kept.items())),
            "calls": self.calls,
            "failed_calls": self.failed_calls,
            "usage": self.usage,
        }


def check(question: TrainQuestion, text: object) -> str | None:
    """Why `text` cannot replace `question`'s text (None: it can)."""
    if not isinstance(text, str):
        return "not a string"
    text = text.strip()
    if not text:
        return "empty"
    if len(text) > MAX_CHARS:
        return "too long"
    if any(ord(c) < 32 for c in text):
        return "control character"
    if any(f"[{m}]" not in text for m in question.mentions):
        return "mention changed"
    if text.count("[") != len(question.mentions) or text.count("]") != len(question.mentions):
        return "extra brackets"
    return None


def _prompt(batch: Sequence[TrainQuestion]) -> str:
    return load_prompt(
        "kgreason.pog.ranker",
        "paraphrase",
        count=str(len(batch)),
        questions="\n".join(q.text for q in batch),
    )


async def _batch(
    llm: ChatLLM, batch: Sequence[TrainQuestion], report: ParaphraseReport
) -> list[TrainQuestion]:
    report.calls += 1
    try:
        reply = await llm.complete(
            [{"role": "user", "content": _prompt(batch)}],
            stage=STAGE,
            temperature=0.7,
            max_tokens=64 * len(batch) + 64,
        )
    except LLMError as e:
        report.failed_calls += 1
        report.kept[f"call failed ({type(e).__name__})"] += len(batch)
        return list(batch)
    try:
        items = extract_json(reply.text)
    except ParseError:
        items = None
    if not isinstance(items, list) or len(items) != len(batch):
        report.kept["reply not a list of the batch's size"] += len(batch)
        return list(batch)
    out = []
    for q, text in zip(batch, items, strict=True):
        why = check(q, text)
        if why is None:
            out.append(replace(q, text=str(text).strip()))
            report.paraphrased += 1
        else:
            report.kept[why] += 1
            out.append(q)
    return out


async def paraphrase(
    llm: ChatLLM,
    questions: Sequence[TrainQuestion],
    *,
    batch: int = BATCH,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[list[TrainQuestion], ParaphraseReport]:
    """`questions` with each text replaced by the LLM's paraphrase where it passes `check`
    (ids, mentions, topics, gold answers and hops unchanged), and what happened."""
    ledger = UsageLedger()
    metered = MeteredLLM(llm, ledger)
    report = ParaphraseReport(asked=len(questions), model=getattr(llm, "model", "") or "")
    out: list[TrainQuestion] = []
    for a in range(0, len(questions), batch):
        out += await _batch(metered, questions[a : a + batch], report)
        if progress is not None:
            progress(len(out), len(questions))
    report.usage = ledger.to_dict()
    if report.calls and report.failed_calls == report.calls:
        reasons = ", ".join(k for k in report.kept if k.startswith("call failed"))
        raise ParaphraseError(f"every paraphrase call failed ({reasons}): nothing paraphrased")
    return out, report
