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
_THINK_TAG = re.compile(r"<(/?)think>", re.I)
_ANSWER = re.compile(r"^\W*answer\W*[:：]\s*(.*)$", re.I | re.M)
_WORD = re.compile(r"\w")
_MAX_WORDS = 20
#: what `_clean` strips, in its order: whitespace, Markdown emphasis, quotes, full stops
_EMPHASIS = "*_`"
_QUOTES = "\"'“”‘’"


def _drop_think(text: str) -> str:
    """`re.sub(r"<think>.*?</think>", "", text, flags=re.S | re.I)` in one pass: each
    `<think>` ends at the first `</think>` after it (the lazy regex rescanned the rest of
    the text from every `<think>` when there was none: quadratic)."""
    pieces: list[str] = []
    pos = 0
    opened: int | None = None
    for m in _THINK_TAG.finditer(text):
        if not m.group(1):
            if opened is None:
                opened = m.start()
        elif opened is not None:
            pieces.append(text[pos:opened])
            pos, opened = m.end(), None
    pieces.append(text[pos:])
    return "".join(pieces)


def _answer_lines(body: str) -> list[str]:
    """`_ANSWER.findall(body)`, tried once per run of non-word characters: `^\\W*` crosses
    newlines, so every line start of a blank run led to the same first word and the regex
    rescanned the run from each (quadratic on many newlines). A line start that fails
    fails for every line start up to that word too, so the next try is past it."""
    found: list[str] = []
    pos, n = 0, len(body)
    while pos <= n:
        if pos > 0 and body[pos - 1] != "\n":
            nl = body.find("\n", pos)
            if nl < 0:
                break
            pos = nl + 1
        m = _ANSWER.match(body, pos)
        if m is not None:
            found.append(m.group(1))
            pos = m.end()
            continue
        word = _WORD.search(body, pos)
        if word is None:
            break
        pos = word.start() + 1
    return found


def _strip_ends(s: str, i: int, j: int, chars: str | None) -> tuple[int, int]:
    """`s[i:j].strip(chars)` as bounds."""
    while i < j and (s[i].isspace() if chars is None else s[i] in chars):
        i += 1
    while j > i and (s[j - 1].isspace() if chars is None else s[j - 1] in chars):
        j -= 1
    return i, j


def _clean(text: str) -> str:
    """Strip markdown emphasis, quotes and a final full stop, however they nest. One
    strip pass per layer moves two bounds (a new string per pass was quadratic on `*.`
    repeated)."""
    i, j = 0, len(text)
    while True:
        before = (i, j)
        i, j = _strip_ends(text, i, j, None)
        i, j = _strip_ends(text, i, j, _EMPHASIS)
        i, j = _strip_ends(text, i, j, _QUOTES)
        while j > i and text[j - 1] == ".":
            j -= 1
        if (i, j) == before:
            return text[i:j]


def parse_answer(text: str) -> str:
    """The answer of an `Answer: ...` line (the last one; reasoning tags dropped), or a
    reply that is one short line by itself; anything else is a ParseError (re-asked)."""
    body = _drop_think(text).strip()
    found = [_clean(m) for m in _answer_lines(body)]
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
