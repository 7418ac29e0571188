"""Line-based KGQA sets: MetaQA and the IRN / PathQuestion family (tab-separated text).
A malformed line is skipped and reported with its number."""

from __future__ import annotations

import re
from pathlib import Path

from kgreason.eval.loaders.base import DatasetError
from kgreason.eval.records import Answer, LoadProblem, LoadResult, Record

_BRACKET = re.compile(r"\[([^\]]+)\]")


def load_metaqa(
    path: Path, *, hops: int | None = None, qtype_path: Path | None = None
) -> LoadResult:
    """MetaQA: `question with [topic entity]<TAB>ans1|ans2`; an aligned qtype file is optional."""
    if not path.is_file():
        raise DatasetError(f"dataset file {path} does not exist")
    qtypes: list[str] = []
    if qtype_path is not None and qtype_path.is_file():
        qtypes = qtype_path.read_text(encoding="utf-8").splitlines()
    lines = path.read_text(encoding="utf-8").splitlines()
    return parse_metaqa_lines(lines, source=str(path), hops=hops, qtypes=qtypes)


def parse_metaqa_lines(
    lines: list[str], *, source: str, hops: int | None, qtypes: list[str] | None = None
) -> LoadResult:
    qtypes = qtypes or []
    out = LoadResult(records=[])
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        parts = line.split("\t")
        m = _BRACKET.search(parts[0])
        if len(parts) != 2 or not m or not parts[1].strip():
            out.problems.append(
                LoadProblem(source, f"line {n}", "expected 'question [topic]<TAB>a|b|c'")
            )
            continue
        topic = m.group(1)
        out.records.append(
            Record(
                id=f"metaqa-{hops}hop-{n}",
                dataset="metaqa",
                task="kgqa",
                question=parts[0].strip(),
                answers=[Answer(a) for a in parts[1].split("|") if a],
                topic_entities={topic: topic},
                hops=hops,
                qtype=qtypes[n - 1] if n - 1 < len(qtypes) else None,
            )
        )
    return out


def _pq_record(path: Path, n: int, question: str, answers: list[Answer], chain: str) -> Record:
    items = chain.split("#<end>#")[0].split("#")
    return Record(
        id=f"{path.stem}/{n}",
        dataset="pathquestion",
        task="kgqa",
        question=question.strip(),
        answers=answers,
        topic_entities={items[0]: items[0]},
        hops=(len(items) - 1) // 2,
        gold_path=items,
    )


def _pq_six_columns(path: Path, n: int, parts: list[str]) -> Record | str:
    """question, one answer, `h#r#t...` chains joined by `*`, the full answer set
    (`/`-separated), supporting triples (`///`-separated), topic entities (`/`-separated)."""
    question, answer, chains, answer_set, _support, topics = (p.strip() for p in parts)
    chain_list = [c for c in chains.split("*") if c.strip()]
    if not question or not chain_list or len(chain_list[0].split("#")) < 3:
        return "expected a question and at least one 'h#r#t' reasoning path in columns 1 and 3"
    names = list(dict.fromkeys(a.strip() for a in [answer, *answer_set.split("/")] if a.strip()))
    if not names:
        return "no answer in columns 2 and 4"
    rec = _pq_record(path, n, question, [Answer(a, a) for a in names], chain_list[0])
    given = [t.strip() for t in topics.split("/") if t.strip()]
    if given:
        rec.topic_entities = {t: t for t in dict.fromkeys(given)}
    return rec


def load_pathquestion(path: Path) -> LoadResult:
    """The IRN / PathQuestion family, by column count:
    - PQ / PQL: `question<TAB>answer(ans1/ans2/)<TAB>subj#r1#e1#r2#ans[#<end>#ans]`; every
      name in the parentheses is a gold answer (the full answer set);
    - six columns: see `_pq_six_columns`.
    A malformed line is skipped and reported with its number."""
    if not path.is_file():
        raise DatasetError(f"dataset file {path} does not exist")
    out = LoadResult(records=[])
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        raw = line.rstrip("\r\n").split("\t")  # keep empty trailing columns
        parts = line.strip().split("\t")
        if len(raw) == 6:
            rec = _pq_six_columns(path, n, raw)
            if isinstance(rec, str):
                out.problems.append(LoadProblem(str(path), f"line {n}", rec))
            else:
                out.records.append(rec)
            continue
        m = re.fullmatch(r"(.*?)\((.*)\)", parts[1]) if len(parts) == 3 else None
        if m is None:
            out.problems.append(
                LoadProblem(
                    str(path),
                    f"line {n}",
                    f"expected 'question<TAB>answer(aliases)<TAB>path' or 6 tab-separated "
                    f"columns, found {len(parts)} column(s)",
                )
            )
            continue
        aliases = [a for a in m.group(2).split("/") if a and a != m.group(1)]
        out.records.append(
            _pq_record(path, n, parts[0], [Answer(m.group(1), m.group(1), aliases)], parts[2])
        )
    return out
