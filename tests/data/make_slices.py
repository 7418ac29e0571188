"""Regenerate the vendored test slices in tests/data/ from the full shared data.

    python tests/data/make_slices.py /path/to/shared/data

Each slice keeps the source's layout and format (the first records of a file, plus named
records the tests use), so tests read it exactly as they would the full file. Licences and
provenance are in each folder's PROVENANCE.md; rerunning must reproduce the files byte for byte.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent

PROGRAM_FILES = [
    f"{d}_dev_{m}.json"
    for d in ("AR-LSAT", "FOLIO", "LogicalDeduction", "ProntoQA", "ProofWriter")
    for m in ("gpt-3.5-turbo", "text-davinci-003")
]
FIRST_PROGRAMS = 60  # test_programs.py reads up to recs[:60]
#: records named by id in tests/lkg/test_logiclm_arlsat.py
EXTRA_IDS = {"ar_lsat_201112_2-G_1_3", "ar_lsat_200006_1-G_2_12"}
METAQA_LINES = 300
#: tests/lkg/test_logiclm_deduction.py samples the first 3 three- and five-object puzzles
PUZZLE_SIZES = ("[IN] [1, 2, 3]", "[IN] [1, 2, 3, 4, 5]\n")


def _program(record: dict) -> str:
    progs = record.get("raw_logic_programs") or [""]
    return progs[0] or ""


def slice_programs(src: Path, dst: Path) -> None:
    records = json.loads(src.read_text(encoding="utf-8"))
    wanted = set(EXTRA_IDS)
    for marker in PUZZLE_SIZES:
        wanted |= set([r["id"] for r in records if marker in _program(r)][:3])
    keep = [r for i, r in enumerate(records) if i < FIRST_PROGRAMS or r["id"] in wanted]
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_text(json.dumps(keep, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def first_lines(src: Path, dst: Path, n: int) -> None:
    with src.open(encoding="utf-8") as f:
        lines = [line for _, line in zip(range(n), f, strict=False)]
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_text("".join(lines), encoding="utf-8")


def main(shared: Path) -> None:
    for name in PROGRAM_FILES:
        rel = Path("logic/logiclm-programs") / name
        slice_programs(shared / rel, OUT / rel)
    rel = Path("logic/folio-gold/folio-validation.jsonl")  # whole file (204 records, 170 kB)
    (OUT / rel).parent.mkdir(parents=True, exist_ok=True)
    (OUT / rel).write_bytes((shared / rel).read_bytes())
    for hops in (1, 2, 3):
        for name in ("dev.txt", "qa_dev_qtype.txt"):
            rel = Path(f"kgqa/metaqa/{hops}-hop/{name}")
            first_lines(shared / rel, OUT / rel, METAQA_LINES)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
