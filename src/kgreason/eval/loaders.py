"""Dataset loaders: each reads one public format into `Record`s.

A malformed record never stops a load: it is reported as a `LoadProblem` with the file and
its position (line number or array index) and skipped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from kgreason.eval.records import Answer, LoadProblem, LoadResult, Passage, Record

RecordParser = Callable[[Any, str], Record]


class DatasetError(ValueError):
    """The file as a whole cannot be read (missing, not JSON...); names the file."""


def _read_json(path: Path) -> Any:
    if not path.is_file():
        raise DatasetError(f"dataset file {path} does not exist")
    text = path.read_text(encoding="utf-8")
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        # JSON Lines?
        if path.suffix == ".jsonl" or "\n{" in text:
            return None
        raise DatasetError(f"{path}: not valid JSON: {e}") from e


def _iter_json_items(path: Path) -> Iterator[tuple[str, Any | Exception]]:
    """(position, item) pairs from a JSON array or a JSON Lines file."""
    data = _read_json(path)
    if data is None or path.suffix == ".jsonl":
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                yield f"line {n}", json.loads(line)
            except json.JSONDecodeError as e:
                yield f"line {n}", e
        return
    if isinstance(data, dict):
        for key in ("Questions", "data", "questions"):
            if isinstance(data.get(key), list):
                data = data[key]
                break
    if not isinstance(data, list):
        raise DatasetError(f"{path}: expected a JSON array of records")
    for i, item in enumerate(data):
        yield f"record {i}", item


def _load_json_records(path: Path, parse: RecordParser, dataset: str) -> LoadResult:
    out = LoadResult(records=[])
    for pos, item in _iter_json_items(path):
        if isinstance(item, Exception):
            out.problems.append(LoadProblem(str(path), pos, f"invalid JSON: {item}"))
            continue
        try:
            out.records.append(parse(item, dataset))
        except (KeyError, TypeError, ValueError, IndexError) as e:
            msg = f"missing field {e}" if isinstance(e, KeyError) else str(e)
            out.problems.append(LoadProblem(str(path), pos, msg))
    return out


def _need_str(v: Any, field: str) -> str:
    if not isinstance(v, str) or not v.strip():
        raise ValueError(f"field '{field}' must be a non-empty string")
    return v


def _answer_list(values: Any, field: str) -> list[Answer]:
    """Gold answer names; blank entries (present in the public WebQSP/WebQuestions files)
    are dropped, and a record with no non-blank answer is malformed."""
    if isinstance(values, str):
        values = [values]
    if not isinstance(values, list):
        raise ValueError(f"field '{field}' must be a list of strings")
    out = [Answer(v.strip()) for v in values if isinstance(v, str) and v.strip()]
    if not out:
        raise ValueError(f"field '{field}' has no non-empty answer")
    return out


# --- Freebase KGQA sets -----------------------------------------------------------------


def _topics(rec: dict[str, Any]) -> dict[str, str]:
    te = rec.get("topic_entity") or {}
    if not isinstance(te, dict):
        raise ValueError("field 'topic_entity' must be an object {mid: name}")
    return {str(k): str(v) for k, v in te.items()}


def _sparql(value: Any) -> str | None:
    """A gold query kept as given; anything but a non-blank string is no query."""
    return value if isinstance(value, str) and value.strip() else None


def parse_cwq(rec: dict[str, Any], dataset: str) -> Record:
    r = _kgqa(rec, dataset, rec["ID"], "answer", qtype=rec.get("compositionality_type"))
    r.sparql = _sparql(rec.get("sparql"))
    return r


def parse_webqsp(rec: dict[str, Any], dataset: str) -> Record:
    """Both forms: the full release (`Parses` with typed answers) and the simplified one
    (`answer`: a list of names)."""
    question = rec.get("RawQuestion") or rec.get("ProcessedQuestion") or rec.get("question")
    answers: list[Answer] = []
    topics = _topics(rec)
    if "Parses" in rec:
        seen: set[str] = set()
        for parse in rec["Parses"]:
            if parse.get("TopicEntityMid") and parse["TopicEntityMid"] not in topics:
                topics[parse["TopicEntityMid"]] = parse.get("TopicEntityName") or ""
            for a in parse.get("Answers", []):
                name = a.get("EntityName") or a.get("AnswerArgument")
                key = a.get("AnswerArgument") or name
                if name and key not in seen:
                    seen.add(key)
                    aid = a["AnswerArgument"] if a.get("AnswerType") == "Entity" else None
                    answers.append(Answer(name, aid))
    elif "answer" in rec:
        answers = _answer_list(rec["answer"], "answer")
    else:
        raise KeyError("'Parses' or 'answer'")
    parses = rec.get("Parses")
    first_parse = parses[0] if isinstance(parses, list) and parses else {}
    return Record(
        id=str(rec.get("QuestionId") or rec.get("ID") or question),
        dataset=dataset,
        task="kgqa",
        question=_need_str(question, "RawQuestion"),
        answers=answers,
        topic_entities=topics,
        # the full release's first parse (the simplified AoG copy has none)
        sparql=_sparql(first_parse.get("Sparql") if isinstance(first_parse, dict) else None),
    )


def parse_grailqa(rec: dict[str, Any], dataset: str) -> Record:
    answers = []
    for a in rec["answer"]:
        if a.get("answer_type") == "Entity":
            answers.append(
                Answer(a.get("entity_name") or a["answer_argument"], a["answer_argument"])
            )
        else:
            answers.append(Answer(str(a["answer_argument"])))
    r = _kgqa(rec, dataset, rec["qid"], answers, hops=rec.get("num_edge"), qtype=rec.get("level"))
    r.sparql = _sparql(rec.get("sparql_query"))
    return r


def parse_simpleqa(rec: dict[str, Any], dataset: str) -> Record:
    rid = rec.get("id") or rec["question"]
    return _kgqa(rec, dataset, rid, "answer", hops=1, qtype=rec.get("relation"))


def parse_webquestions(rec: dict[str, Any], dataset: str) -> Record:
    return _kgqa(rec, dataset, rec.get("id") or rec["question"], "answers")


def _kgqa(
    rec: dict[str, Any],
    dataset: str,
    rid: object,
    answers: str | list[Answer],
    *,
    hops: int | None = None,
    qtype: str | None = None,
) -> Record:
    """A KGQA record from a row with `question` and topic entities; `answers` is the parsed
    list or the row's key holding it (checked after the question, as each loader did)."""
    question = _need_str(rec["question"], "question")
    return Record(
        id=str(rid),
        dataset=dataset,
        task="kgqa",
        question=question,
        answers=_answer_list(rec[answers], answers) if isinstance(answers, str) else answers,
        topic_entities=_topics(rec),
        hops=hops,
        qtype=qtype,
    )


# --- Logic sets (Logic-LM's JSON) -------------------------------------------------------


def parse_logic(rec: dict[str, Any], dataset: str) -> Record:
    options = rec.get("options") or []
    if not isinstance(options, list):
        raise ValueError("field 'options' must be a list")
    label = _need_str(rec["answer"], "answer").strip()
    if options and label not in {o.strip()[:1] for o in options}:
        raise ValueError(f"answer '{label}' is not one of the option letters")
    return Record(
        id=str(rec["id"]),
        dataset=dataset,
        task="logic",
        question=_need_str(rec["question"], "question"),
        context=_need_str(rec["context"], "context"),
        options=[str(o) for o in options],
        label=label,
        answers=[Answer(label)],
    )


# --- Multi-hop QA over passages ---------------------------------------------------------


def _hotpot_context(ctx: Any) -> list[Passage]:
    """`context` as the original files have it ([[title, [sentences]]]) or as the Hugging
    Face exports do ({"title": [...], "sentences": [[...]]}); sentences are joined with one
    space (HotpotQA's carry their own leading spaces)."""
    if isinstance(ctx, dict):
        ctx = list(zip(ctx.get("title") or [], ctx.get("sentences") or [], strict=True))
    if not isinstance(ctx, list):
        raise ValueError("'context' must be a list of [title, sentences] pairs")
    out = []
    for item in ctx:
        if not isinstance(item, list | tuple) or len(item) != 2:
            raise ValueError(f"a 'context' entry is not [title, sentences]: {item!r:.80}")
        title, sents = item
        sents = [sents] if isinstance(sents, str) else sents
        out.append(Passage(str(title), " ".join(str(x).strip() for x in sents if str(x).strip())))
    return out


def _supporting_titles(facts: Any) -> list[str]:
    """Titles of `supporting_facts` ([[title, sentence]] or {"title": [...], ...}), in
    order, once each."""
    if isinstance(facts, dict):
        titles = list(facts.get("title") or [])
    else:
        titles = [f[0] for f in facts or [] if isinstance(f, list | tuple) and f]
    return list(dict.fromkeys(str(t) for t in titles))


def parse_hotpot(rec: dict[str, Any], dataset: str) -> Record:
    """HotpotQA and 2WikiMultiHopQA share this form: `context` = [[title, [sentences]]],
    `supporting_facts` = [[title, sentence index]] (or the Hugging Face column form)."""
    passages = _hotpot_context(rec["context"])
    support = _supporting_titles(rec.get("supporting_facts"))
    return Record(
        id=str(rec.get("_id") or rec["id"]),
        dataset=dataset,
        task="multihop",
        question=_need_str(rec["question"], "question"),
        answers=[Answer(str(rec["answer"]))],
        qtype=rec.get("type"),
        passages=passages,
        supporting_titles=support,
    )


def parse_musique(rec: dict[str, Any], dataset: str) -> Record:
    paragraphs = rec["paragraphs"]
    hops = len(rec.get("question_decomposition") or []) or None
    return Record(
        id=str(rec["id"]),
        dataset=dataset,
        task="multihop",
        question=_need_str(rec["question"], "question"),
        answers=[
            Answer(str(rec["answer"]), aliases=[str(a) for a in rec.get("answer_aliases", [])])
        ],
        hops=hops,
        passages=[Passage(str(p["title"]), str(p["paragraph_text"])) for p in paragraphs],
        supporting_titles=[str(p["title"]) for p in paragraphs if p.get("is_supporting")],
    )


# --- Line-based KGQA sets ---------------------------------------------------------------

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


def load_json_dataset(path: Path, parse: RecordParser, dataset: str) -> LoadResult:
    return _load_json_records(path, parse, dataset)
