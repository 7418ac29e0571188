"""The checkpoint of a dump build (`DIR.partial/state.json`): which stage is done, how far
the dump was read, and the byte size of every file appended to since, so that a killed
build resumes where its last checkpoint left it and ends with the same store."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from kgreason.kg.base import KGError

STATE = "state.json"
STAGES = ("parse", "keys", "map", "fwd", "rev", "labels", "finish")


class ResumeError(KGError):
    """A work directory left by a build of another dump, or with other options."""


@dataclass
class BuildState:
    #: the dump (resolved path, size, mtime) and options this work directory belongs to
    input: dict[str, object]
    options: dict[str, object]
    stage: str = "parse"
    #: parse: decompressed offset and line count after the last chunk written
    offset: int = 0
    lines: int = 0
    chunks: list[dict[str, int]] = field(default_factory=list)
    relations: list[str] = field(default_factory=list)
    drops: dict[str, int] = field(default_factory=dict)
    sha256: str = ""
    #: keys: entity count, buckets and their width in ids
    entities: int = 0
    buckets: int = 0
    width: int = 0
    #: map / fwd / rev / labels: units (chunks or buckets) done in the current stage
    done: int = 0
    edges: int = 0
    #: file name -> byte size at the last checkpoint, for the files the stage appends to
    sizes: dict[str, int] = field(default_factory=dict)

    @property
    def rows(self) -> int:
        return sum(c["rows"] for c in self.chunks)

    def save(self, work: Path) -> None:
        tmp = work / (STATE + ".part")
        tmp.write_text(json.dumps(asdict(self), indent=1))
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, work / STATE)

    def advance(self, work: Path, stage: str) -> None:
        self.stage, self.done, self.sizes = stage, 0, {}
        self.save(work)

    @classmethod
    def load(cls, work: Path) -> BuildState | None:
        path = work / STATE
        if not path.is_file():
            return None
        try:
            data = json.loads(path.read_text())
            return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})
        except (ValueError, TypeError, KeyError) as e:
            raise ResumeError(f"{path}: unreadable checkpoint ({e}); pass --restart") from e


def input_signature(dump: Path) -> dict[str, object]:
    st = dump.stat()
    return {"path": str(dump.resolve()), "size": st.st_size, "mtime_ns": st.st_mtime_ns}
