"""What a run evaluated, in words, from its config.json: the same fields in `kgreason
eval`'s table and `kgreason report`'s header, so neither can leave one out. A field a run
did not record (older runs) says so instead of being blank; config.json is user-editable,
so a field of an unexpected type is shown as it is, never trusted to have a shape."""

from __future__ import annotations

from typing import Any

from kgreason.eval.datasets import SPECS, default_hop, default_split, hop_counts

NOT_RECORDED = "not recorded"


def _hops_text(hops: Any) -> str:
    return ", ".join(str(h) for h in hops) if isinstance(hops, list) else str(hops)


def _defaulted(c: dict[str, Any]) -> list[Any]:
    d = c.get("defaulted")
    return d if isinstance(d, list) else []


def _split(c: dict[str, Any]) -> str:
    dataset = str(c.get("dataset") or "")
    split = c.get("split")
    if split is None:
        if dataset not in SPECS:
            return "n/a (a dataset file)"
        split = default_split(dataset)  # older runs recorded None for the default
        return f"{split} (default)"
    return f"{split} (default)" if "split" in _defaulted(c) else str(split)


def _hops(c: dict[str, Any]) -> str:
    dataset = str(c.get("dataset") or "")
    counts = hop_counts(dataset)
    if not counts:
        return "n/a (not split by hops)"
    hops = c.get("hops")
    every = ",".join(str(h) for h in counts)
    if hops is None or "hops" in _defaulted(c):
        shown = default_hop(dataset) if hops is None else hops
        return f"{_hops_text(shown)} (default; pass --hops {every} for all)"
    return _hops_text(hops)


def _model(c: dict[str, Any]) -> str:
    if c.get("model"):
        return str(c["model"])
    return "no LLM (LLM-free mode)" if c.get("method") == "llm-free" else NOT_RECORDED


def _ranker(c: dict[str, Any]) -> str:
    if "ranker" not in c:
        return NOT_RECORDED
    r = c["ranker"]
    if r is None:
        return "n/a (the method uses no path ranker)"
    if not isinstance(r, dict):
        return str(r)
    trained = f", trained on {r['trained_on']}" if r.get("trained_on") else ""
    return f"{r.get('label') or '?'}{trained}"


def _sample(c: dict[str, Any]) -> str:
    limit, sample = c.get("limit"), c.get("sample")
    per_hop = " per hop" if isinstance(c.get("hops"), list) and len(c["hops"]) > 1 else ""
    if sample is not None:
        text = f"random {sample} (seed {c.get('seed') or 0})"
        return text + (f", then the first {limit}{per_hop}" if limit else "")
    return f"first {limit}{per_hop}" if limit else "all"


def run_fields(c: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, value) for every field that says what a run evaluated; none is empty."""
    return [
        ("dataset", str(c.get("dataset") or NOT_RECORDED)),
        ("split", _split(c)),
        ("hops", _hops(c)),
        ("method", str(c.get("method") or NOT_RECORDED)),
        ("LLM", _model(c)),
        ("ranker", _ranker(c)),
        ("sample", _sample(c)),
    ]


def trained_note(c: dict[str, Any]) -> tuple[str, bool] | None:
    """(what happened to the questions the ranker was trained on, is it a warning)."""
    t = c.get("trained_questions")
    if not t:
        return None
    try:
        return _note(t)
    except (AttributeError, KeyError, TypeError, ValueError):
        return f"WARNING: unreadable record of the ranker's training questions: {t!r:.80}", True


def _note(t: Any) -> tuple[str, bool]:
    if t.get("policy") == "exclude":
        n, trained = t["excluded"], t.get("excluded_trained", t["excluded"])
        dropped = f" and {n - trained:,} it drew but could not use" if n > trained else ""
        return (
            f"excluded {n:,} questions: {trained:,} the ranker was trained on{dropped} (of "
            f"{t['loaded']:,} loaded; --include-trained keeps them)",
            False,
        )
    if t.get("policy") == "include":
        if not t.get("in_run"):
            return (
                f"--include-trained: none of the {t['evaluated']} questions is a training one",
                False,
            )
        return (
            f"WARNING: {t['in_run']} of {t['evaluated']} questions are ones the ranker was "
            "trained on (--include-trained): these scores flatter it",
            True,
        )
    return (
        f"WARNING: trained-on questions not checked ({t.get('why') or 'no record of them'}); "
        "scores may include questions the ranker was trained on",
        True,
    )
