"""The answer stage (paper section 4.4): the free-text answer of a multi-hop question from
the retrieved premises, scored with EM and F1 (eqs. 4-5, `kgreason.eval.metrics`).

The paper appends the retrieved subgraph "alongside the raw context" for the answering LLM;
both go in here (premises first, with their passages' titles; the passages can be left out
with `include_passages=False`). When a solver ran on the question its verdict is shown as
one more line of evidence, never as the answer itself.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from kgreason.lkg.prompts import load_prompt
from kgreason.lkg.retrieval import Premise
from kgreason.llm.base import ChatLLM
from kgreason.llm.parse import ParseError, ask_parsed

STAGE = "answer"
_THINK = re.compile(r"<think>.*?</think>", re.S | re.I)
_ANSWER = re.compile(r"^\W*answer\W*[:：]\s*(.*)$", re.I | re.M)
_MAX_WORDS = 20


def _clean(text: str) -> str:
    """Strip markdown emphasis, quotes and a final full stop, however they nest."""
    s, prev = text, None
    while s != prev:
        prev = s
        s = s.strip().strip("*_`").strip("\"'“”‘’").rstrip(".")
    return s


def parse_answer(text: str) -> str:
    """The answer of an `Answer: ...` line (the last one; reasoning tags dropped), or a
    reply that is one short line by itself; anything else is a ParseError (re-asked)."""
    body = _THINK.sub("", text).strip()
    found = [_clean(m) for m in _ANSWER.findall(body)]
    found = [a for a in found if a]
    if found:
        return found[-1]
    lines = [ln for ln in body.splitlines() if ln.strip()]
    if (
        len(lines) == 1
        and not _ANSWER.match(lines[0])
        and len(lines[0].split()) <= _MAX_WORDS
        and _clean(lines[0])
    ):
        return _clean(lines[0])
    raise ParseError("expected one line 'Answer: <short answer>'")


def render_premises(premises: Sequence[Premise], limit: int = 50) -> str:
    """Numbered premises with their titles; at most `limit` (an unpruned hull can be long),
    the rest counted."""
    if not premises:
        return "(none retrieved)"
    lines = [
        f"{i}. [{'; '.join(p.titles) or 'untitled'}] {p.text}"
        for i, p in enumerate(premises[:limit], 1)
    ]
    if len(premises) > limit:
        lines.append(f"({len(premises) - limit} lower-ranked premises not shown)")
    return "\n".join(lines)


def render_passages(passages: Sequence[tuple[str, str]]) -> str:
    return "\n\n".join(f"Title: {t}\n{text}" for t, text in passages) or "(none)"


@dataclass
class AnswerGenerator:
    """One LLM call (stage "answer"), re-asked once if the reply has no readable answer."""

    llm: ChatLLM
    include_passages: bool = True
    temperature: float = 0.0
    #: room for a reasoning model's thinking before its answer line
    max_tokens: int | None = 2048
    max_premises: int = 50

    async def answer(
        self,
        question: str,
        premises: Sequence[Premise],
        passages: Sequence[tuple[str, str]] = (),
        solver_note: str = "",
    ) -> tuple[str, str]:
        """(answer, raw reply); LLMOutputError when the re-asked reply is still unreadable."""
        prompt = load_prompt(
            "answer",
            question=question,
            premises=render_premises(premises, self.max_premises),
            passages=render_passages(passages) if self.include_passages else "(not shown)",
            solver=f"\n{solver_note}" if solver_note else "",
        )
        return await ask_parsed(
            self.llm,
            [{"role": "user", "content": prompt}],
            parse_answer,
            stage=STAGE,
            reminder="Reply with one line: Answer: <short answer>",
            temperature=self.temperature,
            max_tokens=self.max_tokens,
        )
