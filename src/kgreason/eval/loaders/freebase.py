"""Freebase KGQA sets (JSON): CWQ, WebQSP (both forms), GrailQA, SimpleQuestions,
WebQuestions."""

from __future__ import annotations

from typing import Any

from kgreason.eval.loaders.base import answer_list, need_str
from kgreason.eval.records import Answer, Record


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
        answers = answer_list(rec["answer"], "answer")
    else:
        raise KeyError("'Parses' or 'answer'")
    parses = rec.get("Parses")
    first_parse = parses[0] if isinstance(parses, list) and parses else {}
    return Record(
        id=str(rec.get("QuestionId") or rec.get("ID") or question),
        dataset=dataset,
        task="kgqa",
        question=need_str(question, "RawQuestion"),
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
    question = need_str(rec["question"], "question")
    return Record(
        id=str(rid),
        dataset=dataset,
        task="kgqa",
        question=question,
        answers=answer_list(rec[answers], answers) if isinstance(answers, str) else answers,
        topic_entities=_topics(rec),
        hops=hops,
        qtype=qtype,
    )
