"""Scripted LLM replies for PoG end-to-end tests, written as functions of the prompt.

The replies read the paths the prompt shows, so a broken path search, pruning or rendering
changes (and fails) the test: the "LLM" only selects, judges and answers from what it is
shown, like a model that understands the question but knows nothing beyond the prompt.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence

from kgreason.llm.base import Message

Responder = Callable[[list[Message]], str]

_REL = re.compile(r"\} (?:->|<-) ([^{}]+?) (?:->|<-) \{")
_SET = re.compile(r"\{([^{}]*)\}")


def question_block(messages: list[Message]) -> str:
    """The part of the prompt after the few-shot examples (from the last 'Q: ')."""
    content = messages[0]["content"]
    return content[content.rindex("\nQ: ") :]


def shown_paths(messages: list[Message]) -> list[str]:
    """The rendered paths in the prompt's own question block (numbering stripped)."""
    out = []
    for line in question_block(messages).splitlines():
        if "} -> " in line or "} <- " in line:
            out.append(re.sub(r"^Path \d+: ", "", line.strip()))
    return out


def relations(path: str) -> list[str]:
    """Each hop's relation label (`r` or, relations clustered, `r1 | r2 (inverse)`)."""
    return _REL.findall(path)


def relation_names(label: str) -> set[str]:
    return {part.replace("(inverse)", "").strip() for part in label.split(" | ")}


def follows(path: str, chain: Sequence[str]) -> bool:
    """The path's hops carry exactly the relations of `chain`, in order."""
    labels = relations(path)
    return len(labels) == len(chain) and all(
        r in relation_names(lb) for lb, r in zip(labels, chain, strict=True)
    )


def node_sets(path: str) -> list[list[str]]:
    """Each `{...}` of a rendered path as its items, `id: name` shown as the name."""
    sets = []
    for body in _SET.findall(path):
        items = [i.strip() for i in body.split(", ") if i.strip() and not i.startswith("...")]
        sets.append([i.split(": ", 1)[1] if ": " in i else i for i in items])
    return sets


def requested_width(messages: list[Message]) -> int:
    m = re.search(r"give the top (\d+) paths", messages[0]["content"])
    assert m, "precise_select prompt without its width"
    return int(m.group(1))


def select_by(score: Callable[[str], float]) -> Responder:
    """precise_select: the top-W shown paths by `score` (ties keep the shown order)."""

    def reply(messages: list[Message]) -> str:
        paths = shown_paths(messages)
        order = sorted(range(len(paths)), key=lambda i: -score(paths[i]))
        chosen = order[: requested_width(messages)]
        return "top_list: {" + ", ".join(f"Path {i + 1}" for i in chosen) + "} by relevance."

    return reply


def summarize_first(messages: list[Message]) -> str:
    paths = shown_paths(messages)
    return "summary: " + (paths[0] if paths else "no path given")


def evaluate_when(sufficient: Callable[[str], bool]) -> Responder:
    def reply(messages: list[Message]) -> str:
        if any(sufficient(p) for p in shown_paths(messages)):
            return "{Yes}. The paths answer the split questions and the question."
        return "{No}. No path links the entities as the question needs."

    return reply


def answer_from(extract: Callable[[str], Sequence[str] | None]) -> Responder:
    """answer / final_answer: the names `extract` reads off the first path it accepts."""

    def reply(messages: list[Message]) -> str:
        for p in shown_paths(messages):
            got = extract(p)
            if got:
                return "answer: {" + ", ".join(got) + "}\nreason: read off the path " + p
        return "answer: {unknown}\nreason: nothing in the paths"

    return reply


def analysis_reply(split_questions: Sequence[str], indicator: str) -> str:
    return json.dumps({"split_questions": list(split_questions), "indicator": indicator})


def prefix_match(chain: Sequence[str]) -> Callable[[str], float]:
    """Score: how many leading relations of the path follow `chain` (branch steps are
    prefixes of full paths, so this also ranks them)."""

    def score(path: str) -> float:
        n = 0
        for a, b in zip(relations(path), chain, strict=False):
            if b not in relation_names(a):
                break
            n += 1
        return n - 0.01 * max(0, len(relations(path)) - len(chain))

    return score


#: the opening words of each stage's prompt (src/kgreason/pog/prompts/*.txt)
_STAGE_MARKERS = (
    ("Extract the topic entities", "topic_entity"),
    ("You will receive a multi-hop question", "question_analysis"),
    ("score the candidate paths", "precise_select"),
    ("first provide three predicted results", "supplement"),
    ("summarise the knowledge triples", "summarise"),
    ("determine whether these paths are sufficient", "evaluate"),
    ("the paths were not judged sufficient", "final_answer"),
    ("generate the answer to the main question", "answer"),
)


def stage_of(messages: list[Message]) -> str:
    """Which PoG stage wrote this prompt (for servers that do not see the stage name)."""
    head = messages[0]["content"][:1200]
    for marker, stage in _STAGE_MARKERS:
        if marker in head:
            return stage
    raise AssertionError(f"unknown prompt: {head[:80]!r}")
