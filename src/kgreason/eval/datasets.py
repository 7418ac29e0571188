"""The dataset registry: a name (and split / hops) to files under a data directory.

Datasets are not shipped with the package (their licences vary), except MetaQA's dev
questions, which are vendored beside the bundled MetaQA KB (CC BY 3.0). Everything else is
read from a data directory laid out as the project's `shared/data` (kgqa/..., logic/...),
given by --data-dir or KGREASON_DATA_DIR, or as an explicit file path.

`SPECS` is the built-in table (read-only by convention); a caller adds a dataset by passing
`load(..., specs={**default_datasets(), "mine": DatasetSpec(...)})`, no global to mutate.
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from kgreason.eval import loaders as L
from kgreason.eval.records import LoadResult

FREEBASE = "kgqa/freebase-questions"


@dataclass(frozen=True)
class DatasetSpec:
    name: str
    task: str
    relpath: str  # with {split} / {hops} placeholders
    default_split: str
    kind: str  # "json", "metaqa", "pathquestion"
    parser: L.RecordParser | None = None
    #: a dataset released in variants: name -> the files it may be in (first found wins),
    #: with {split} placeholders; `relpath` is then unused. The first variant is the default.
    variants: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


SPECS: dict[str, DatasetSpec] = {
    s.name: s
    for s in [
        DatasetSpec("cwq", "kgqa", f"{FREEBASE}/pog/cwq.json", "test", "json", L.parse_cwq),
        DatasetSpec(
            "cwq_multi", "kgqa", f"{FREEBASE}/pog/cwq_multi.json", "test", "json", L.parse_cwq
        ),
        DatasetSpec(
            "webqsp", "kgqa", f"{FREEBASE}/aog/WebQSP.json", "test", "json", L.parse_webqsp
        ),
        DatasetSpec(
            "grailqa", "kgqa", f"{FREEBASE}/pog/grailqa.json", "test", "json", L.parse_grailqa
        ),
        DatasetSpec(
            "simpleqa", "kgqa", f"{FREEBASE}/pog/SimpleQA.json", "test", "json", L.parse_simpleqa
        ),
        DatasetSpec(
            "webquestions",
            "kgqa",
            f"{FREEBASE}/pog/WebQuestions.json",
            "test",
            "json",
            L.parse_webquestions,
        ),
        DatasetSpec("metaqa", "kgqa", "kgqa/metaqa/{hops}-hop/{split}.txt", "dev", "metaqa"),
        DatasetSpec(
            "pq", "kgqa", "kgqa/pathquestion/PathQuestion/PQ-{hops}H.txt", "test", "pathquestion"
        ),
        DatasetSpec(
            "pql", "kgqa", "kgqa/pathquestion/PathQuestion/PQL-{hops}H.txt", "test", "pathquestion"
        ),
        DatasetSpec("folio", "logic", "logic/FOLIO/{split}.json", "dev", "json", L.parse_logic),
        DatasetSpec(
            "prontoqa", "logic", "logic/ProntoQA/{split}.json", "dev", "json", L.parse_logic
        ),
        DatasetSpec(
            "proofwriter", "logic", "logic/ProofWriter/{split}.json", "dev", "json", L.parse_logic
        ),
        DatasetSpec(
            "logicaldeduction",
            "logic",
            "logic/LogicalDeduction/{split}.json",
            "dev",
            "json",
            L.parse_logic,
        ),
        DatasetSpec("arlsat", "logic", "logic/AR-LSAT/{split}.json", "dev", "json", L.parse_logic),
        DatasetSpec(
            "hotpotqa", "multihop", "multihop/hotpotqa/{split}.json", "dev", "json", L.parse_hotpot
        ),
        DatasetSpec(
            "2wikimultihopqa",
            "multihop",
            "multihop/2wiki/{split}.json",
            "dev",
            "json",
            L.parse_hotpot,
        ),
        # the short name the SymbolLKG paper's tables use
        DatasetSpec(
            "2wiki", "multihop", "multihop/2wiki/{split}.json", "dev", "json", L.parse_hotpot
        ),
        DatasetSpec(
            "musique",
            "multihop",
            "multihop/musique/{split}.jsonl",
            "dev",
            "json",
            L.parse_musique,
            # the release's file names; {split}.jsonl is the answerable one (its loader
            # checks that no question in it is unanswerable)
            variants={
                "answerable": (
                    "multihop/musique/musique_ans_v1.0_{split}.jsonl",
                    "multihop/musique/{split}.jsonl",
                ),
                "full": ("multihop/musique/musique_full_v1.0_{split}.jsonl",),
            },
        ),
    ]
}

DATASET_NAMES = {
    "folio": "FOLIO",
    "prontoqa": "ProntoQA",
    "proofwriter": "ProofWriter",
    "logicaldeduction": "LogicalDeduction",
    "arlsat": "AR-LSAT",
}


def default_datasets() -> dict[str, DatasetSpec]:
    """A fresh copy of the built-in dataset table, for a caller to extend."""
    return dict(SPECS)


#: the hop counts a dataset kind is split into (files per hop count)
HOP_COUNTS: dict[str, tuple[int, ...]] = {"metaqa": (1, 2, 3), "pathquestion": (2, 3)}


def hop_counts(name: str, specs: Mapping[str, DatasetSpec] | None = None) -> tuple[int, ...]:
    """The hop counts `name` comes in; () for a dataset not split by hops."""
    spec = (SPECS if specs is None else specs).get(name)
    return HOP_COUNTS.get(spec.kind, ()) if spec is not None else ()


def default_hop(name: str, specs: Mapping[str, DatasetSpec] | None = None) -> int | None:
    """The hop count loaded when none is named (MetaQA 1, PathQuestion 2), else None."""
    counts = hop_counts(name, specs)
    return counts[0] if counts else None


#: what each variant is called where it was published (MuSiQue, Trivedi et al., TACL 2022)
VARIANT_NAMES = {("musique", "answerable"): "MuSiQue-Ans", ("musique", "full"): "MuSiQue-Full"}


def variants(name: str, specs: Mapping[str, DatasetSpec] | None = None) -> tuple[str, ...]:
    """The variants `name` is released in, the default first; () for most datasets."""
    spec = (SPECS if specs is None else specs).get(name)
    return tuple(spec.variants) if spec is not None else ()


def variant_label(name: str, variant: str | None, defaulted: bool = False) -> str:
    """'full (MuSiQue-Full)' for tables; 'n/a' for a dataset without variants."""
    if variant is None:
        return "n/a"
    named = VARIANT_NAMES.get((name, variant))
    inner = ", ".join(x for x in (named, "default" if defaulted else None) if x)
    return f"{variant} ({inner})" if inner else variant


def _variant_path(
    spec: DatasetSpec, variant: str, base: Path, split: str, hops: int | None
) -> Path:
    """The variant's file under `base`; a clear error naming the files looked for (and the
    variants that are there) when none exists."""
    tried = [base / rel.format(split=split, hops=hops) for rel in spec.variants[variant]]
    for path in tried:
        if path.is_file():
            return path
    present = [
        v
        for v, rels in spec.variants.items()
        if v != variant and any((base / r.format(split=split, hops=hops)).is_file() for r in rels)
    ]
    there = f"; the {', '.join(present)} variant is there" if present else ""
    raise L.DatasetError(
        f"{spec.name}: the {variant} variant ({split}) is not in {base}: looked for "
        f"{' or '.join(str(p.relative_to(base)) for p in tried)}{there}"
    )


def _check_variant(variant: str | None, data: LoadResult, path: Path) -> LoadResult:
    """MuSiQue's answerable variant has no unanswerable question: a file that does is the
    full variant under another name (evaluated as answerable, its scores would be wrong)."""
    if variant == "answerable" and any(r.answerable is False for r in data.records):
        n = sum(r.answerable is False for r in data.records)
        raise L.DatasetError(
            f"{path}: {n} unanswerable questions: this is the full variant, not the "
            f"answerable one (pass --variant full, or give the answerable file)"
        )
    return data


def default_split(name: str) -> str | None:
    spec = SPECS.get(name)
    return spec.default_split if spec is not None else None


def load_hops(
    name: str, *, split: str | None, hops: list[int], root: str | Path | None = None
) -> LoadResult:
    """Several hop counts of one dataset as one result, in hop order (ids stay distinct:
    they name the hop count)."""
    out = LoadResult(records=[])
    for h in hops:
        part = load(name, split=split, hops=h, root=root)
        out.records += part.records
        out.problems += part.problems
    return out


def data_dir(explicit: str | Path | None = None) -> Path | None:
    d = explicit or os.environ.get("KGREASON_DATA_DIR")
    return Path(d) if d else None


def _bundled_metaqa(hops: int, split: str) -> LoadResult | None:
    """MetaQA questions vendored with the bundled KG (gzip), when present for this split."""
    folder = resources.files("kgreason.eval").joinpath("data", "metaqa")
    qa = folder.joinpath(f"{hops}-hop-{split}.txt.gz")
    if not qa.is_file():
        return None
    qt = folder.joinpath(f"{hops}-hop-{split}-qtype.txt.gz")

    def lines(res) -> list[str]:
        return gzip.decompress(res.read_bytes()).decode("utf-8").splitlines()

    qtypes = lines(qt) if qt.is_file() else []
    return L.parse_metaqa_lines(
        lines(qa), source=f"bundled MetaQA {hops}-hop {split}", hops=hops, qtypes=qtypes
    )


def load(
    name: str,
    *,
    split: str | None = None,
    hops: int | None = None,
    path: str | Path | None = None,
    root: str | Path | None = None,
    specs: Mapping[str, DatasetSpec] | None = None,
    variant: str | None = None,
) -> LoadResult:
    """Load dataset `name` from `specs` (the built-in `SPECS` by default); `path`
    overrides the registry's location. `variant`: one of `variants(name)` (default the
    first), for a dataset released in several."""
    specs = SPECS if specs is None else specs
    if name not in specs:
        raise L.DatasetError(f"unknown dataset '{name}' (known: {', '.join(sorted(specs))})")
    spec = specs[name]
    split = split or spec.default_split
    if variant is not None and not spec.variants:
        raise L.DatasetError(f"dataset '{name}' has no variants (--variant is for musique)")
    if spec.variants:
        variant = variant or next(iter(spec.variants))
        if variant not in spec.variants:
            raise L.DatasetError(
                f"unknown {name} variant {variant!r} (choose from {', '.join(spec.variants)})"
            )
    if hops is None:
        hops = default_hop(name, specs)
    if path is None:
        base = data_dir(root)
        if base is None and spec.kind == "metaqa":
            bundled = _bundled_metaqa(hops or 1, split)
            if bundled is not None:
                return bundled
        rel = spec.variants[variant][0] if variant is not None else spec.relpath
        if base is None:
            raise L.DatasetError(
                f"dataset '{name}' is not bundled: pass --data-dir (or set KGREASON_DATA_DIR) "
                f"to a directory holding {rel.format(split=split, hops=hops)}"
            )
        if variant is not None:
            path = _variant_path(spec, variant, base, split, hops)
        else:
            path = base / spec.relpath.format(split=split, hops=hops)
    path = Path(path)
    if spec.kind == "metaqa":
        qtype = path.parent / f"qa_{split}_qtype.txt"
        return L.load_metaqa(path, hops=hops, qtype_path=qtype)
    if spec.kind == "pathquestion":
        return L.load_pathquestion(path)
    assert spec.parser is not None
    data = L.load_json_dataset(path, spec.parser, DATASET_NAMES.get(name, name))
    return _check_variant(variant, data, path)
