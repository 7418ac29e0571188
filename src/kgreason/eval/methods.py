"""Answering methods the runner can evaluate, behind one small interface.

The paper's baselines (IO prompting, chain-of-thought, self-consistency) live here; PoG,
PoG-E, the LLM-free mode and SymbolLKG are adapted in `kgreason.eval.adapters`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from kgreason.eval.records import Record
from kgreason.llm.base import ChatLLM, LLMOutputError, Message
from kgreason.llm.parse import ParseError, ask_parsed, read_reply
from kgreason.prompts import load_prompt
from kgreason.prompts import prompt_hashes as package_prompt_hashes


@dataclass
class Outcome:
    """What a method returns for one record; the runner adds scores, usage and timing."""

    answers: list[str] = field(default_factory=list)
    answer_ids: list[str | None] = field(default_factory=list)
    #: the full text the method produced (what the lenient metric reads)
    output_text: str = ""
    #: PoG's phase or SymbolLKG's route, when the method has one
    phase: str | None = None
    #: "answer" for a method's answer; "candidates" for the LLM-free mode's ranked candidates
    answer_kind: str = "answer"
    error_kind: str | None = None
    error: str | None = None
    #: reasoning paths as lists of [head, relation, tail] triples with names, for the report
    paths: list[list[list[str]]] = field(default_factory=list)
    names: dict[str, str] = field(default_factory=dict)
    #: topic entity ids, so a report can draw the paths from where they start
    topics: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    #: what the method retrieved, best first (passage titles in multi-hop QA); None when it
    #: retrieves nothing. The runner scores Recall@2/5 of it against the supporting titles.
    retrieved: list[str] | None = None


class Method(Protocol):
    name: str

    async def answer(self, record: Record, llm: ChatLLM | None) -> Outcome: ...


def prompt_hashes() -> dict[str, str]:
    """sha256 of every prompt file the eval package ships (recorded in each run)."""
    return package_prompt_hashes("kgreason.eval")


def parse_final_braces(text: str) -> str:
    """The last `{...}` in a reply: baselines end with "So the answer is {X}."."""
    found = re.findall(r"\{([^{}]+)\}", text)
    if not found:
        raise ParseError("no answer in curly braces")
    return found[-1].strip()


def render_prompt(kind: str, record: Record) -> str:
    """The baseline prompt `kind` ("io" or "cot") for `record`, by the shared strict loader."""
    if record.task == "logic":
        return load_prompt(
            "kgreason.eval",
            f"logic_{kind}",
            question=record.question,
            context=record.context or "",
            options="\n".join(record.options),
        )
    return load_prompt("kgreason.eval", f"kgqa_{kind}", question=record.question)


def _answer_value(value: str, record: Record) -> str:
    """Logic sets answer with an option letter; normalise "B) False" or "b" to "B"."""
    if record.task == "logic":
        m = re.match(r"\s*([A-Ea-e])\b", value)
        if m:
            return m.group(1).upper()
    return value


@dataclass
class PromptBaseline:
    """IO or chain-of-thought prompting with six in-context examples (ToG's baselines)."""

    name: str
    kind: str  # "io" | "cot"
    temperature: float = 0.0
    max_tokens: int = 256

    async def answer(self, record: Record, llm: ChatLLM | None) -> Outcome:
        if llm is None:
            return Outcome(error_kind="no_llm", error=f"method '{self.name}' needs an LLM")
        messages: list[Message] = [{"role": "user", "content": render_prompt(self.kind, record)}]
        try:
            value, raw = await ask_parsed(
                llm,
                messages,
                parse_final_braces,
                stage=self.name,
                reminder="End your reply with the answer in curly braces, e.g. {ANSWER}.",
                temperature=self.temperature,
                max_tokens=self.max_tokens,
            )
        except LLMOutputError as e:
            return Outcome(output_text=e.raw, error_kind="unparseable_reply", error=str(e))
        return Outcome(answers=[_answer_value(value, record)], output_text=raw)


@dataclass
class SelfConsistency:
    """Self-consistency: k chain-of-thought samples at temperature > 0, majority vote.
    Samples carry distinct `sample` indices so a response cache never replays one as another."""

    name: str = "sc"
    samples: int = 5
    temperature: float = 0.7
    max_tokens: int = 256

    async def answer(self, record: Record, llm: ChatLLM | None) -> Outcome:
        if llm is None:
            return Outcome(error_kind="no_llm", error="method 'sc' needs an LLM")
        messages: list[Message] = [{"role": "user", "content": render_prompt("cot", record)}]
        votes: Counter[str] = Counter()
        surface: dict[str, str] = {}
        texts: list[str] = []
        for i in range(self.samples):
            c = await llm.complete(
                messages,
                stage="sc",
                temperature=self.temperature,
                max_tokens=self.max_tokens,
                sample=i,
            )
            texts.append(c.text)
            try:
                value = _answer_value(read_reply(c.text, parse_final_braces), record)
            except ParseError:
                continue
            key = value.strip().lower()
            votes[key] += 1
            surface.setdefault(key, value)
        output = "\n---\n".join(texts)
        if not votes:
            return Outcome(
                output_text=output,
                error_kind="unparseable_reply",
                error=f"none of {self.samples} samples had an answer in braces",
            )
        # ties broken by first appearance (Counter keeps insertion order for equal counts)
        best = max(votes, key=lambda k: votes[k])
        return Outcome(answers=[surface[best]], output_text=output, extra={"votes": dict(votes)})


BASELINES: dict[str, Callable[[], Method]] = {
    "io": lambda: PromptBaseline("io", "io"),
    "cot": lambda: PromptBaseline("cot", "cot"),
    "sc": lambda: SelfConsistency(),
}
