"""What every dataset loader shares: the file-level error, JSON / JSON Lines reading with
per-record problems, and the field checks of the record parsers."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from kgreason.eval.records import Answer, LoadProblem, LoadResult, Record

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


def need_str(v: Any, field: str) -> str:
    if not isinstance(v, str) or not v.strip():
        raise ValueError(f"field '{field}' must be a non-empty string")
    return v


def answer_list(values: Any, field: str) -> list[Answer]:
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


def load_json_dataset(path: Path, parse: RecordParser, dataset: str) -> LoadResult:
    return _load_json_records(path, parse, dataset)
