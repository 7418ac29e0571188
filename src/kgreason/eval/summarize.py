"""Aggregate figures of a run: the numbers every report format shows."""

from __future__ import annotations

import json
import math
import re
import statistics
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgreason.eval import rundir
from kgreason.eval.lkg_scores import LKG_LABELS, lkg_metrics
from kgreason.eval.metrics import RECALL_KS


@dataclass
class RunFigures:
    name: str
    config: dict[str, Any]
    rows: list[dict[str, Any]]
    timings: dict[str, dict[str, Any]]
    metrics: dict[str, float | int | None] = field(default_factory=dict)
    by_group: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    calls_histogram: dict[int, int] = field(default_factory=dict)
    error_kinds: dict[str, int] = field(default_factory=dict)
    phases: dict[str, int] = field(default_factory=dict)
    #: bounds the questions hit (`bound_figures`); empty when the method reports none
    bounds: dict[str, Any] = field(default_factory=dict)


def _mean(xs: list[float]) -> float | None:
    return round(sum(xs) / len(xs), 4) if xs else None


def _rate(rows: list[dict[str, Any]], key: str) -> float | None:
    vals = [bool(r[key]) for r in rows if key in r]
    return round(100 * sum(vals) / len(vals), 2) if vals else None


#: deeper than this a value is refused: the report and the server's JSON encoder recurse
MAX_DEPTH = 64
#: numbers the figures add up or scale stay below this (a 10**400 integer overflows a mean)
MAX_NUMBER = 1e15
_SURROGATE = re.compile("[\ud800-\udfff]")
_JSON_NAMES = {type(None): "null", bool: "boolean", int: "integer", float: "number",
               str: "string", list: "array", dict: "object"}  # fmt: skip


def _what(v: Any) -> str:
    if isinstance(v, float) and not math.isfinite(v):
        return "NaN or infinity"
    if isinstance(v, int | float) and not isinstance(v, bool) and abs(v) > MAX_NUMBER:
        return "a number out of range"
    return _JSON_NAMES.get(type(v), type(v).__name__)


def json_problem(value: Any, depth: int = MAX_DEPTH) -> str | None:
    """Why parsed JSON cannot be shown: nested deeper than `depth`, NaN or infinite (not
    JSON), or a lone surrogate (not UTF-8). Iterative, so any depth is safe to check."""
    stack = [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict | list) and d > depth:
            return f"nested deeper than {MAX_DEPTH} levels"
        if isinstance(v, dict):
            if any(_SURROGATE.search(k) for k in v):
                return "a key with a lone surrogate (not UTF-8)"
            stack.extend((x, d + 1) for x in v.values())
        elif isinstance(v, list):
            stack.extend((x, d + 1) for x in v)
        elif isinstance(v, float) and not math.isfinite(v):
            return "NaN or infinity (not JSON)"
        elif isinstance(v, str) and _SURROGATE.search(v):
            return "a lone surrogate (not UTF-8)"
    return None


def _num(v: Any) -> bool:
    # `type(v) is`: a bool is no number here; NaN and infinities fail the bounds
    return (type(v) is int or type(v) is float) and -MAX_NUMBER <= v <= MAX_NUMBER


def _count(v: Any) -> bool:
    return type(v) is int and 0 <= v <= MAX_NUMBER


def _opt(ok: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda v: v is None or ok(v)


def _strs(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


def _paths(v: Any) -> bool:
    return isinstance(v, list) and all(
        isinstance(p, list) and all(isinstance(t, list) and len(t) == 3 and _strs(t) for t in p)
        for p in v
    )


def _names(v: Any) -> bool:
    return isinstance(v, dict) and all(isinstance(x, str) for x in v.values())


Field = tuple[bool, Callable[[Any], bool], str]  # required, check, what is expected
_COUNT: Field = (True, _count, "a non-negative integer")
_HIT: Field = (False, lambda v: isinstance(v, bool | None) or _num(v), "a boolean or a number")
_NUMBER: Field = (False, _num, "a finite number")
_TEXT: Field = (False, _opt(lambda v: isinstance(v, str)), "a string or null")
_SCALAR: Field = (False, lambda v: isinstance(v, str | bool | None) or _num(v), "a scalar")
#: every field of a results.jsonl row that the figures and the report read
RESULT_FIELDS: dict[str, Field] = {
    "id": (True, lambda v: isinstance(v, str), "a string"),
    "llm_calls": _COUNT, "prompt_tokens": _COUNT, "completion_tokens": _COUNT,
    "paper_calls": (False, _count, "a non-negative integer"),
    **dict.fromkeys(("strict_hit1", "lenient_hit", "any_hit", "correct"), _HIT),
    **dict.fromkeys(("em", "f1", *(f"recall@{k}" for k in RECALL_KS)), _NUMBER),
    "sparql_length": (False, _opt(_num), "a number or null"),
    "relation_overlap": (False, _opt(_num), "a number or null"),
    "hops": _SCALAR, "qtype": _SCALAR,
    "answerable": (False, lambda v: isinstance(v, bool | None), "a boolean or null"),
    **dict.fromkeys(("phase", "error_kind", "dataset", "question", "answer_kind"), _TEXT),
    "answers": (False, _opt(_strs), "a list of strings"),
    "topics": (False, _opt(_strs), "a list of strings"),
    "paths": (False, _opt(_paths), "a list of paths of [head, relation, tail] strings"),
    "names": (False, _opt(_names), "an object of strings"),
}  # fmt: skip
TIMING_FIELDS: dict[str, Field] = {
    "id": (True, lambda v: isinstance(v, str), "a string"),
    "wall_s": (True, _num, "a finite number"),
}
CONFIG_FIELDS: dict[str, Field] = {"kg": (False, _opt(lambda v: isinstance(v, dict)), "an object")}


def _problem(row: dict[str, Any], fields: dict[str, Field]) -> str | None:
    for k, (required, _, _) in fields.items():
        if required and k not in row:
            return f"{k}: missing"
    for k, v in row.items():
        spec = fields.get(k)
        if spec is not None and not spec[1](v):
            return f"{k}: expected {spec[2]}, got {_what(v)}"
        if _SURROGATE.search(k):
            return "a key with a lone surrogate (not UTF-8)"
        why = None
        if type(v) is str:  # the common scalars inline: this runs for every field of every row
            why = "a lone surrogate (not UTF-8)" if _SURROGATE.search(v) else None
        elif isinstance(v, float | dict | list):
            why = json_problem(v, MAX_DEPTH - 1)
        if why is not None:
            return f"{k[:40]}: {why}"
    return None


def result_problem(row: dict[str, Any]) -> str | None:
    """Why a results.jsonl row cannot be used (None: it can), naming the field."""
    return _problem(row, RESULT_FIELDS)


def timing_problem(row: dict[str, Any]) -> str | None:
    return _problem(row, TIMING_FIELDS)


def config_problem(config: Any) -> str | None:
    if not isinstance(config, dict):
        return f"not a JSON object ({_what(config)})"
    return _problem(config, CONFIG_FIELDS)


def parse_config(data: bytes) -> dict[str, Any]:
    """config.json's bytes as the object the report reads; ValueError says why not."""
    try:
        config = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise ValueError("not valid UTF-8") from None
    except RecursionError:
        raise ValueError("nested too deeply to parse") from None
    except ValueError as e:
        raise ValueError(f"not JSON ({str(e)[:80]})") from None
    problem = config_problem(config)
    if problem is not None:
        raise ValueError(problem)
    return dict(config)


def load_run(path: Path) -> RunFigures:
    """The figures of the run directory `path` (`kgreason report`, `kgreason eval`): rows
    the figures cannot use are skipped and logged by file and line."""
    if not (path / rundir.RESULTS).is_file():
        raise rundir.RunDirError(f"{path} is not a run directory (no {rundir.RESULTS})")
    config: dict[str, Any] = {}
    if (path / rundir.CONFIG).is_file():
        try:
            config = parse_config((path / rundir.CONFIG).read_bytes())
        except ValueError as e:
            raise rundir.RunDirError(f"{path / rundir.CONFIG}: {e}") from None
    rows = rundir.read_jsonl_tolerant(path / rundir.RESULTS, check=result_problem)
    timings = rundir.read_jsonl_tolerant(path / rundir.TIMINGS, check=timing_problem)
    return run_figures(path.name, config, rows, timings)


def run_figures(
    name: str,
    config: dict[str, Any],
    rows: list[dict[str, Any]],
    timing_rows: list[dict[str, Any]],
) -> RunFigures:
    """The figures of rows that passed `result_problem` / `timing_problem`
    (the fields read here have the types these expect)."""
    timings = {t["id"]: t for t in timing_rows}
    fig = RunFigures(name=name, config=config, rows=rows, timings=timings)
    walls = [t["wall_s"] for t in timings.values()]
    fig.metrics = {
        "questions": len(rows),
        "strict_hit1": _rate(rows, "strict_hit1"),
        "lenient_hit": _rate(rows, "lenient_hit"),
        "any_hit": _rate(rows, "any_hit"),
        "accuracy": _rate(rows, "correct"),
        "em": _mean([100 * r["em"] for r in rows if "em" in r]),
        "f1": _mean([100 * r["f1"] for r in rows if "f1" in r]),
        "errors": sum(1 for r in rows if r.get("error_kind")),
        "mean_llm_calls": _mean([r["llm_calls"] for r in rows]),
        "mean_paper_calls": _mean([r["paper_calls"] for r in rows if "paper_calls" in r]),
        "mean_prompt_tokens": _mean([r["prompt_tokens"] for r in rows]),
        "mean_completion_tokens": _mean([r["completion_tokens"] for r in rows]),
        "median_wall_s": round(statistics.median(walls), 4) if walls else None,
        **lkg_metrics(rows),
    }
    groups: dict[str, dict[str, list[dict[str, Any]]]] = {
        "hops": defaultdict(list),
        "qtype": defaultdict(list),
        "answerable": defaultdict(list),  # MuSiQue-Full: its unanswerable twins apart
    }
    for r in rows:
        if r.get("hops") is not None:
            groups["hops"][str(r["hops"])].append(r)
        if r.get("qtype"):
            groups["qtype"][str(r["qtype"])].append(r)
        if isinstance(r.get("answerable"), bool):
            groups["answerable"]["answerable" if r["answerable"] else "unanswerable"].append(r)
    main = "correct" if rows and "correct" in rows[0] else "strict_hit1"
    for gname, g in groups.items():
        if g:
            fig.by_group[gname] = {
                k: {
                    "n": len(v),
                    main: _rate(v, main) or 0.0,
                    "lenient_hit": _rate(v, "lenient_hit") or 0.0,
                }
                for k, v in sorted(g.items())
            }
    fig.calls_histogram = dict(sorted(Counter(r["llm_calls"] for r in rows).items()))
    fig.error_kinds = dict(
        Counter(r["error_kind"] for r in rows if r.get("error_kind")).most_common()
    )
    fig.phases = dict(Counter(r.get("phase") or "none" for r in rows).most_common())
    fig.bounds = bound_figures(rows)
    return fig


def cap_text(config: dict[str, Any]) -> str:
    """The subgraph cap a run used, as recorded ("not recorded" before it was)."""
    flat = config.get("settings")
    flat = flat if isinstance(flat, dict) else {}
    if "pog.max_subgraph_triples" not in flat:
        return "cap not recorded"
    cap = flat["pog.max_subgraph_triples"]
    return "no cap" if cap is None else f"cap {cap:,}" if isinstance(cap, int) else str(cap)


def bound_kind(text: str) -> str:
    """The kind of a `bounds_hit` line, the words before its colon without parentheses:
    "subgraph", "path search", "entity sets cut", ... (ToG's "neighbours of X cut at ...")."""
    if text.startswith("neighbours of "):
        return "neighbours"
    head = re.sub(r"\s*\([^)]*\)", "", text.split(":", 1)[0]).strip()
    return head[:60] or "other"


def _bounds_of(row: dict[str, Any]) -> list[str] | None:
    extra = row.get("extra")
    got = extra.get("bounds_hit") if isinstance(extra, dict) else None
    return got if isinstance(got, list) and all(isinstance(b, str) for b in got) else None


def bound_figures(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Questions that hit a bound, in all and per kind (each question counted once a kind),
    so a run says how often its caps cut ("subgraph cap hit on N of M questions"). Empty
    when no row reports bounds (IO, CoT, SymbolLKG)."""
    per_row = [_bounds_of(r) for r in rows]
    if all(b is None for b in per_row):
        return {}
    kinds = Counter(k for b in per_row for k in {bound_kind(x) for x in b or []})
    return {
        "questions": len(rows),
        "hit": sum(1 for b in per_row if b),
        "by_kind": dict(sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0]))),
        "subgraph_hit": kinds.get("subgraph", 0),
    }


METRIC_LABELS = {
    "questions": "questions",
    "strict_hit1": "Hits@1 strict (%)",
    "lenient_hit": "lenient, paper-compatible (%)",
    "any_hit": "any answer exact (%)",
    "accuracy": "accuracy (%)",
    "em": "EM (%)",
    "f1": "F1 (%)",
    "errors": "questions ended by an error",
    "mean_llm_calls": "LLM calls / question (HTTP requests)",
    "mean_paper_calls": "LLM calls / question as the PoG paper counts (one per step)",
    "mean_prompt_tokens": "prompt tokens / question",
    "mean_completion_tokens": "completion tokens / question",
    "median_wall_s": "median wall time (s)",
    **LKG_LABELS,
}
