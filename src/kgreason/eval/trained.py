"""Which questions a path ranker was trained on, so an evaluation can leave them out.

A ranker scored on its own training questions flatters (the bundled one reaches ~100 % on
the first 4,000 MetaQA dev questions of each hop, which it was trained on). Its artefact
holds `training_questions.json`: a sorted set of 64-bit hashes of the normalised training
question texts, tied to `ranker.json`'s training-set fingerprint, and those of the questions
training drew but could not use (topic not in the KG, no answer). Both are left out: the
rest of the dataset is then an unselected held-out set, where a sample taken right after
the training range would otherwise be mostly the unusable ones. Matching by text rather
than by id catches the same question in another file, split or order.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgreason.eval.records import Record

QUESTIONS_FILE = "training_questions.json"
FORMAT = "kgreason-training-questions"
VERSION = 1
HASH = "blake2b-64 of the question text, lowercased, whitespace collapsed; sorted, big-endian"

_SPACE = re.compile(r"\s+")


class TrainedSetError(ValueError):
    """A training-questions file that cannot be used (unreadable, another artefact's)."""


def question_hash(text: str) -> int:
    """64-bit identity of a question's text (case and spacing do not matter)."""
    norm = _SPACE.sub(" ", text.strip().lower())
    return int.from_bytes(hashlib.blake2b(norm.encode("utf-8"), digest_size=8).digest(), "big")


@dataclass(frozen=True)
class TrainedSet:
    """The training questions of one ranker artefact, as text hashes."""

    hashes: frozenset[int]
    questions: int
    source: str
    #: questions training drew but dropped (unusable): not trained on, still not held out
    dropped: frozenset[int] = frozenset()

    def __contains__(self, record: object) -> bool:
        """Trained on (not merely drawn)."""
        return isinstance(record, Record) and question_hash(record.question) in self.hashes

    def drawn(self, record: Record) -> bool:
        """Trained on, or drawn for training and dropped."""
        h = question_hash(record.question)
        return h in self.hashes or h in self.dropped


def _pack(texts: Iterable[str]) -> tuple[int, str]:
    hashes = sorted({question_hash(t) for t in texts})
    packed = b"".join(h.to_bytes(8, "big") for h in hashes)
    return len(hashes), base64.b64encode(packed).decode("ascii")


def _unpack(path: Path, text: Any) -> frozenset[int]:
    try:
        packed = base64.b64decode(text, validate=True)
    except (ValueError, TypeError) as e:
        raise TrainedSetError(f"{path}: unreadable hashes: {e}") from e
    if len(packed) % 8:
        raise TrainedSetError(f"{path}: hashes are not 8-byte values")
    return frozenset(int.from_bytes(packed[i : i + 8], "big") for i in range(0, len(packed), 8))


def write_questions(
    out: Path,
    texts: Iterable[str],
    *,
    fingerprint: str,
    source: str,
    dropped: Iterable[str] = (),
) -> Path:
    """Write the artefact's `training_questions.json` (about 11 bytes per question)."""
    texts = list(texts)
    distinct, packed = _pack(texts)
    dropped = list(dropped)
    doc = {
        "format": FORMAT,
        "version": VERSION,
        "hash": HASH,
        "fingerprint": fingerprint,
        "source": source,
        "questions": len(texts),
        "distinct": distinct,
        "hashes": packed,
        "dropped_questions": len(dropped),
        "dropped": _pack(dropped)[1],
    }
    path = Path(out) / QUESTIONS_FILE
    path.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return path


def read_questions(artefact: Path, spec: dict[str, Any]) -> TrainedSet | None:
    """The artefact's training questions; None when it does not record them (older or
    third-party artefacts). A file whose fingerprint is not the spec's is refused."""
    path = Path(artefact) / QUESTIONS_FILE
    if not path.is_file():
        return None
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise TrainedSetError(f"{path}: unreadable: {e}") from e
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or doc.get("version") != VERSION:
        raise TrainedSetError(f"{path}: not a {FORMAT} version {VERSION} file")
    expected = (spec.get("training") or {}).get("fingerprint")
    if doc.get("fingerprint") != expected:
        raise TrainedSetError(
            f"{path}: recorded for training set {str(doc.get('fingerprint'))[:12]}, but the "
            f"ranker's training set is {str(expected)[:12]}"
        )
    hashes = _unpack(path, doc.get("hashes"))
    dropped = _unpack(path, doc.get("dropped", ""))
    n = int(doc.get("questions", len(hashes)))
    return TrainedSet(hashes, n, str(doc.get("source", "")), dropped)


def training_source(training: dict[str, Any]) -> str:
    """'metaqa dev, 1/2/3-hop, first 4000 per hop' from a ranker.json training section."""
    if training.get("label_free"):
        gen = training.get("generated") or {}
        shape = "/".join(str(h) for h in gen.get("hops") or training.get("hops") or [])
        per_hop = gen.get("per_hop", "?")
        return f"label-free: questions generated from the KG, {shape}-hop, {per_hop} per hop"
    parts = [str(training.get("dataset") or "?"), str(training.get("split") or "?")]
    hops = training.get("hops")
    if hops:
        parts.append("/".join(str(h) for h in hops) + "-hop")
    limit = training.get("limit_per_hop")
    parts.append(f"first {limit} per hop" if limit else "all questions")
    return ", ".join(parts)


def split_trained(
    records: Sequence[Record], trained: TrainedSet
) -> tuple[list[Record], list[Record]]:
    """(held-out records, records training drew: trained on or dropped)."""
    kept: list[Record] = []
    drawn: list[Record] = []
    for r in records:
        (drawn if trained.drawn(r) else kept).append(r)
    return kept, drawn


@dataclass(frozen=True)
class RankerUse:
    """The path ranker a run uses, as the run's config and tables name it."""

    label: str
    path: str | None = None
    trained_on: str | None = None
    trained: TrainedSet | None = None
    #: why trained-on questions cannot be checked (a trained ranker with no record of them)
    unchecked: str | None = None

    def config(self) -> dict[str, Any]:
        out: dict[str, Any] = {"label": self.label, "path": self.path}
        if self.trained_on is not None:
            out["trained_on"] = self.trained_on
            out["training_questions_recorded"] = self.trained is not None
        return out


def ranker_use(selector: object | None) -> RankerUse:
    """What ranks paths for a PoG-family method: a trained artefact, the zero-shot ranker,
    or SBERT similarity (no selector)."""
    from kgreason.pog.ranker.artefact import PathRanker
    from kgreason.pog.ranker.factory import bundled_ranker_path

    ranker = getattr(selector, "ranker", None)
    if ranker is None:
        return RankerUse("none (SBERT similarity)")
    if not isinstance(ranker, PathRanker):
        from kgreason.pog.ranker.zeroshot import HopAlignedRanker

        name = "hop-aligned" if isinstance(ranker, HopAlignedRanker) else type(ranker).__name__
        return RankerUse(f"{name} (zero-shot, not trained)")
    kind = ranker.spec.get("model", {}).get("kind", "?")
    src = ranker.source
    bundled = src is not None and src.resolve() == bundled_ranker_path().resolve()
    label = f"bundled MetaQA path ranker ({kind})" if bundled else f"path ranker {src} ({kind})"
    training = ranker.spec.get("training") or {}
    trained_on = training_source(training)
    try:
        trained = read_questions(src, ranker.spec) if src is not None else None
    except TrainedSetError as e:
        return RankerUse(label, str(src), trained_on, None, str(e))
    why = None if trained else "its artefact does not record its training questions"
    return RankerUse(label, str(src) if src else None, trained_on, trained, why)
