"""Logic-LM's data files: gold problems (`<Dataset>/<split>.json`) and the programs GPT models
wrote for them (`logic_programs/<Dataset>_<split>_<model>.json`).

Both are JSON arrays of records `{id, context, question, options, answer}`; program files add
`raw_logic_programs` (a list; Logic-LM runs only the first entry). A malformed record does not
stop the load: it is skipped and reported as a `RecordIssue` naming the file and position.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

#: Dataset name -> the answer letters Logic-LM's random fallback draws from (None: the
#: record's own options).
FALLBACK_LETTERS: dict[str, tuple[str, ...] | None] = {
    "ProntoQA": ("A", "B"),
    "ProofWriter": ("A", "B", "C"),
    "FOLIO": ("A", "B", "C"),
    "LogicalDeduction": None,
    "AR-LSAT": ("A", "B", "C", "D", "E"),
}
_PROGRAM_FILE = re.compile(r"^(?P<dataset>.+?)_(?P<split>dev|test|train)_(?P<model>.+)\.json$")
_LETTER = re.compile(r"^\s*\(?([A-Z])[).:]")


class DatasetError(ValueError):
    """The file as a whole cannot be read (not JSON, not a list); names the file."""


@dataclass(frozen=True)
class RecordIssue:
    path: Path
    position: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}: record {self.position}: {self.message}"


@dataclass(frozen=True)
class LogicRecord:
    """One problem. `programs` is empty for gold files; `program` is what Logic-LM runs."""

    id: str
    context: str
    question: str
    options: tuple[str, ...]
    answer: str | None
    programs: tuple[str, ...] = ()
    source: Path | None = None
    position: int = 0

    @property
    def program(self) -> str | None:
        return self.programs[0] if self.programs else None

    @property
    def letters(self) -> tuple[str, ...]:
        """Option letters in order ('A) ...' -> 'A'; unlettered options count from A)."""
        out = []
        for i, o in enumerate(self.options):
            m = _LETTER.match(o)
            out.append(m.group(1) if m else chr(65 + i))
        return tuple(out)


@dataclass
class LoadedFile:
    path: Path
    records: list[LogicRecord] = field(default_factory=list)
    issues: list[RecordIssue] = field(default_factory=list)
    dataset: str | None = None
    split: str | None = None
    model: str | None = None


def parse_program_filename(path: Path) -> tuple[str, str, str] | None:
    """`AR-LSAT_dev_gpt-3.5-turbo.json` -> ("AR-LSAT", "dev", "gpt-3.5-turbo")."""
    m = _PROGRAM_FILE.match(path.name)
    return (m["dataset"], m["split"], m["model"]) if m else None


def _record(raw: object, path: Path, pos: int, *, programs: bool) -> LogicRecord:
    if not isinstance(raw, dict):
        raise ValueError(f"expected an object, got {type(raw).__name__}")
    for key in ("id", "question"):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            raise ValueError(f"missing or empty {key!r}")
    opts = raw.get("options", [])
    if not isinstance(opts, list) or not all(isinstance(o, str) for o in opts):
        raise ValueError("'options' must be a list of strings")
    answer = raw.get("answer")
    if answer is not None and not isinstance(answer, str):
        raise ValueError("'answer' must be a string")
    progs: list[str] = []
    if programs:
        rp = raw.get("raw_logic_programs")
        if not isinstance(rp, list) or not all(isinstance(p, str) for p in rp):
            raise ValueError("'raw_logic_programs' must be a list of strings")
        progs = rp
    context = raw.get("context", "")
    if not isinstance(context, str):
        raise ValueError("'context' must be a string")
    gold = answer.strip().strip("()").strip() if answer else None
    return LogicRecord(
        raw["id"], context, raw["question"], tuple(opts), gold or None, tuple(progs), path, pos
    )


def load_file(path: Path | str, *, programs: bool | None = None) -> LoadedFile:
    """Read a gold or program file. `programs` defaults to "the file name looks like a
    program file"; records are then required to carry `raw_logic_programs`."""
    path = Path(path)
    meta = parse_program_filename(path)
    want_programs = meta is not None if programs is None else programs
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise DatasetError(f"{path}: {e.strerror or e}") from e
    except json.JSONDecodeError as e:
        raise DatasetError(f"{path}: not JSON (line {e.lineno}): {e.msg}") from e
    if not isinstance(data, list):
        raise DatasetError(f"{path}: expected a JSON list of records")
    out = LoadedFile(path)
    if meta:
        out.dataset, out.split, out.model = meta
    elif path.parent.name in FALLBACK_LETTERS:
        out.dataset, out.split = path.parent.name, path.stem
    seen: set[str] = set()
    for pos, raw in enumerate(data):
        try:
            rec = _record(raw, path, pos, programs=want_programs)
        except ValueError as e:
            out.issues.append(RecordIssue(path, pos, str(e)))
            continue
        if rec.id in seen:
            out.issues.append(RecordIssue(path, pos, f"duplicate id {rec.id!r}"))
            continue
        seen.add(rec.id)
        out.records.append(rec)
    return out


def attach_gold(programs: LoadedFile, gold: LoadedFile) -> list[RecordIssue]:
    """Replace each program record's answer by the gold file's (matched by id); returns
    the records whose id is not in the gold file or whose answers disagree."""
    by_id = {r.id: r for r in gold.records}
    issues: list[RecordIssue] = []
    merged: list[LogicRecord] = []
    for r in programs.records:
        g = by_id.get(r.id)
        if g is None:
            issues.append(RecordIssue(r.source or programs.path, r.position, "id not in gold"))
            merged.append(r)
            continue
        if r.answer is not None and r.answer != g.answer:
            msg = f"answer {r.answer!r} differs from gold {g.answer!r}; gold used"
            issues.append(RecordIssue(r.source or programs.path, r.position, msg))
        merged.append(
            LogicRecord(
                r.id, r.context, r.question, r.options, g.answer, r.programs, r.source, r.position
            )
        )
    programs.records = merged
    return issues
