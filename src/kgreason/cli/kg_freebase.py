"""`kgreason kg build freebase-rdf-latest.gz`: the dump path of `kg build` (kg/freebase)."""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path
from typing import Any, cast

from kgreason.cli.common import console, emit_json, err_console, fail

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)i?B?\s*$", re.IGNORECASE)
#: off a terminal, one progress line per this many seconds
LOG_EVERY_S = 15.0


def parse_memory(text: str) -> int:
    """`2G`, `512M`, `1.5GiB`, `1073741824` -> bytes; at least 16 MB."""
    m = _SIZE.match(text)
    if not m:
        raise ValueError(f"--memory: not a size: {text!r} (for example 2G or 512M)")
    scale = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}[m.group(2).upper()]
    size = int(float(m.group(1)) * scale)
    if size < 16 << 20:
        raise ValueError(f"--memory: {text} is below the 16M minimum")
    return size


class _Ticker:
    """Progress as one line per stage step: rate and ETA from the dump bytes read."""

    def __init__(self) -> None:
        self.err = err_console()
        self.started = time.monotonic()
        self.last = 0.0
        self.stage = ""

    def __call__(self, stage: str, done: int, total: int) -> None:
        now = time.monotonic()
        if stage != self.stage:
            self.stage, self.started, self.last = stage, now, now
        spent = now - self.started
        finished = done >= total
        if (now - self.last < LOG_EVERY_S and not finished) or (finished and spent < 2.0):
            return
        self.last = now
        frac = done / total if total else 1.0
        eta = spent * (1 - frac) / frac if frac > 0 else 0.0
        what = f"{done / 1e6:,.0f} MB of {total / 1e6:,.0f} MB, {done / 1e6 / spent:,.1f} MB/s"
        if stage != "parse":
            what = f"{done:,} of {total:,}"
        self.err.print(
            f"kgreason: {stage}: {frac:.0%} ({what}), {spent:,.0f} s, ETA {eta:,.0f} s",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )


def build_dump(
    dump: Path,
    out: Path,
    *,
    memory: str,
    lang: str,
    keep: list[str],
    force: bool,
    restart: bool,
    json_out: bool,
) -> int:
    """Build, print the summary and the drops by rule; returns the triple count."""
    from kgreason.kg.base import KGError
    from kgreason.kg.freebase import Cleaning, DumpOptions, build_freebase

    try:
        options = DumpOptions(memory=parse_memory(memory), cleaning=Cleaning(lang, tuple(keep)))
    except ValueError as e:
        fail(str(e))
    started = time.perf_counter()
    err = err_console()
    try:
        manifest = build_freebase(
            dump,
            out,
            options=options,
            force=force,
            restart=restart,
            progress=_Ticker(),
            say=lambda s: err.print(f"kgreason: {s}", markup=False, soft_wrap=True),
        )
    except KGError as e:
        partial = Path(f"{out}.partial")
        more = f" (a rerun resumes from the checkpoint in {partial})" if partial.is_dir() else ""
        fail(f"{e}{more}")
    seconds = round(time.perf_counter() - started, 2)
    c = manifest.counts
    dropped = manifest.sources[0]["dropped"]
    if json_out:
        emit_json(
            {"store": str(out), "seconds": seconds, "format": "freebase", **c, "dropped": dropped}
        )
        return int(c["triples"])
    con = console()
    con.print(
        f"built {out} from the Freebase dump: {c['dump_lines']:,} lines, {c['triples']:,} "
        f"triples ({c['input_triples'] - c['triples']:,} duplicates dropped), "
        f"{c['entities']:,} entities, {c['relations']:,} relations in {seconds} s "
        f"({c['dump_lines'] / max(seconds, 1e-9):,.0f} lines/s, budget {memory})",
        soft_wrap=True,
        highlight=False,
    )
    con.print("dropped by rule:", highlight=False)
    for d in cast(list[dict[str, Any]], dropped):
        if d["lines"]:
            con.print(
                f"  {d['rule']}: {d['lines']:,} lines ({d['source']})",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )
    sys.stdout.flush()
    return int(c["triples"])
