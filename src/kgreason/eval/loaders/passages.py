"""Records with their own text: the logic sets (Logic-LM's JSON: context, options, label)
and multi-hop QA over passages (HotpotQA, 2WikiMultiHopQA, MuSiQue)."""

from __future__ import annotations

from typing import Any

from kgreason.eval.loaders.base import need_str
from kgreason.eval.records import Answer, Passage, Record


def parse_logic(rec: dict[str, Any], dataset: str) -> Record:
    options = rec.get("options") or []
    if not isinstance(options, list):
        raise ValueError("field 'options' must be a list")
    label = need_str(rec["answer"], "answer").strip()
    if options and label not in {o.strip()[:1] for o in options}:
        raise ValueError(f"answer '{label}' is not one of the option letters")
    return Record(
        id=str(rec["id"]),
        dataset=dataset,
        task="logic",
        question=need_str(rec["question"], "question"),
        context=need_str(rec["context"], "context"),
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
        question=need_str(rec["question"], "question"),
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
        question=need_str(rec["question"], "question"),
        answers=[
            Answer(str(rec["answer"]), aliases=[str(a) for a in rec.get("answer_aliases", [])])
        ],
        hops=hops,
        passages=[Passage(str(p["title"]), str(p["paragraph_text"])) for p in paragraphs],
        supporting_titles=[str(p["title"]) for p in paragraphs if p.get("is_supporting")],
        answerable=rec["answerable"] if isinstance(rec.get("answerable"), bool) else None,
    )
