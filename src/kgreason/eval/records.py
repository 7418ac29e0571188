"""The one typed record format every dataset loader produces."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Task = Literal["kgqa", "logic", "multihop"]


@dataclass
class Answer:
    name: str
    id: str | None = None
    aliases: list[str] = field(default_factory=list)

    def surface_forms(self) -> list[str]:
        return [self.name, *self.aliases]


@dataclass
class Passage:
    title: str
    text: str


@dataclass
class Record:
    id: str
    dataset: str
    task: Task
    question: str
    answers: list[Answer] = field(default_factory=list)
    #: topic entities given by the dataset: id -> name (CWQ/WebQSP/GrailQA) or name -> name (MetaQA)
    topic_entities: dict[str, str] = field(default_factory=dict)
    hops: int | None = None
    qtype: str | None = None
    #: logic sets: the premises text, the options ("A) True", ...) and the gold option letter
    context: str | None = None
    options: list[str] = field(default_factory=list)
    label: str | None = None
    #: multi-hop QA: candidate passages and the titles of the gold supporting passages
    passages: list[Passage] = field(default_factory=list)
    supporting_titles: list[str] = field(default_factory=list)
    #: a gold reasoning path when the dataset has one (PathQuestion)
    gold_path: list[str] = field(default_factory=list)
    #: the gold SPARQL query when the dataset has one (CWQ, WebQSP with Parses, GrailQA):
    #: eval rows derive `sparql_length` and `relation_overlap` from it (eval/gold_sparql.py)
    sparql: str | None = None
    #: MuSiQue: False for the full variant's unanswerable twins (their supporting paragraph
    #: removed), True for answerable questions; None for datasets that do not say
    answerable: bool | None = None


@dataclass
class LoadProblem:
    """A malformed record: skipped, reported with file and position."""

    file: str
    position: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.position}: {self.message}"


@dataclass
class LoadResult:
    records: list[Record]
    problems: list[LoadProblem] = field(default_factory=list)
