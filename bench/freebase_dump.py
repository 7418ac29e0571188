"""A synthetic Freebase dump in the real dump's exact line format, deterministically.

    python bench/freebase_dump.py --lines 10000000 --out /tmp/fb-10M.gz [--seed 0]
    python bench/freebase_dump.py --clean /tmp/fb-10M.gz --out /tmp/fb-10M.nt
    python bench/freebase_dump.py --questions STORE --n 1000 --out /tmp/questions.json

Lines are `<s>\\t<p>\\t<o>\\t.` grouped by subject, as in freebase-rdf-latest.gz, with what
that file holds besides facts: names in several languages (`@en`, `@en-GB`, `@fr`, `@de`,
`@ja`), escaped quotes and `\\u` escapes, `type.object.type` / `type.object.key` lines,
`http://rdf.freebase.com/key/` keys, `common.topic.*` aliases and descriptions, typed
literals (`^^xsd:date`, `^^xsd:int`), `rdf:type`, `rdfs:label`, `owl:sameAs`,
`freebase.*` bookkeeping, schema subjects (`type.type.*`, `type.property.*`), `g.` ids,
IRI objects that are not entities, duplicate facts, and power-law degrees (hubs).

`--clean` is an independent, line-by-line reference of the cleaning kgreason applies
(kgreason/kg/freebase/rules.py): it writes the kept facts and English names as plain
N-Triples, which `kgreason kg build` turns into the store the dump build must equal.
"""

from __future__ import annotations

import argparse
import gzip
import sys
from pathlib import Path

import numpy as np

NS = "http://rdf.freebase.com/ns/"
XSD = "http://www.w3.org/2001/XMLSchema#"
ALPHABET = "0123456789bcdfghjklmnpqrstvwxyz_"
DOMAINS = {
    "film": ("film", ("directed_by", "starring", "genre", "country", "written_by", "sequel")),
    "people": ("person", ("place_of_birth", "nationality", "spouse", "children", "profession")),
    "location": ("location", ("containedby", "contains", "adjoins", "time_zones")),
    "music": ("artist", ("genre", "label", "album", "origin", "contribution")),
    "sports": ("sports_team", ("sport", "league", "championships", "arena", "roster")),
    "book": ("book", ("author", "subject", "publisher", "edition", "characters")),
    "organization": ("organization", ("founders", "headquarters", "leadership", "parent")),
    "award": ("award_winner", ("awards_won", "nominations", "honored_for", "category")),
}
RELATIONS = [f"{d}.{t}.{p}" for d, (t, ps) in DOMAINS.items() for p in ps]
WORDS = [
    "north",
    "river",
    "stone",
    "bridge",
    "silver",
    "garden",
    "harbor",
    "crown",
    "falcon",
    "maple",
    "quiet",
    "iron",
    "golden",
    "winter",
    "summer",
    "lake",
    "forest",
    "valley",
    "hill",
    "castle",
    "tower",
    "ocean",
    "star",
    "light",
]
OTHER = {"fr": "Le {}", "de": "Die {}", "es": "El {}"}


def mid(i: int) -> str:
    """Freebase-style ids: most `m.0...`, every tenth a `g.11...`."""
    digits = []
    x = i + 1
    while x:
        digits.append(ALPHABET[x % 32])
        x //= 32
    body = "".join(reversed(digits))
    return f"g.11{body}" if i % 10 == 7 else f"m.0{body}"


def line(s: str, p: str, o: str) -> str:
    return f"<{s}>\t<{p}>\t{o}\t."


def ns(x: str) -> str:
    return f"<{NS}{x}>"


def entity_lines(i: int, n: int, rng: np.random.Generator, zipf: np.ndarray) -> list[str]:
    s = NS + mid(i)
    w = [WORDS[j] for j in rng.integers(0, len(WORDS), 3)]
    name = f"{w[0].title()} {w[1].title()} {i}"
    out = []
    u = rng.random(16)
    if u[0] < 0.9:
        q = name if u[1] > 0.05 else f'{name} \\"{w[2]}\\" Caf\\u00e9'
        out.append(line(s, NS + "type.object.name", f'"{q}"@en'))
    elif u[1] < 0.5:
        out.append(line(s, NS + "type.object.name", f'"{name} (UK)"@en-GB'))
    for k, (lang, fmt) in enumerate(OTHER.items()):
        if u[2 + k] < 0.4:
            out.append(line(s, NS + "type.object.name", f'"{fmt.format(name)}"@{lang}'))
    if u[5] < 0.2:
        out.append(line(s, NS + "type.object.name", f'"名前 {i}"@ja'))
    dom = list(DOMAINS)[i % len(DOMAINS)]
    out.append(line(s, NS + "type.object.type", ns(f"{dom}.{DOMAINS[dom][0]}")))
    out.append(line(s, NS + "type.object.type", ns("common.topic")))
    out.append(line(s, NS + "type.object.key", f'"/en/{w[0]}_{w[1]}_{i}"'))
    out.append(line(s, "http://rdf.freebase.com/key/wikipedia.en", f'"{w[0]}_{i}"'))
    out.append(line(s, "http://www.w3.org/1999/02/22-rdf-syntax-ns#type", ns("common.topic")))
    if u[6] < 0.3:
        out.append(line(s, NS + "common.topic.alias", f'"{w[2]} {i}"@en'))
    if u[7] < 0.4:
        text = f'{name} is a {w[2]} in the {w[0]} of {w[1]}.\\nIt is \\"{w[2]}\\".'
        out.append(line(s, NS + "common.topic.description", f'"{text}"@en'))
    out.append(line(s, NS + "common.topic.notable_types", ns(mid(int(zipf[0]) % n))))
    if u[8] < 0.4:
        date = f"{1900 + i % 120}-{1 + i % 12:02d}-{1 + i % 28:02d}"
        out.append(line(s, NS + f"{dom}.{DOMAINS[dom][0]}.date", f'"{date}"^^<{XSD}date>'))
    if u[9] < 0.2:
        out.append(line(s, NS + f"{dom}.{DOMAINS[dom][0]}.count", f'"{i % 997}"^^<{XSD}int>'))
    if u[10] < 0.2:
        out.append(line(s, "http://www.w3.org/2000/01/rdf-schema#label", f'"{name}"@en'))
    if u[11] < 0.1:
        out.append(
            line(s, "http://www.w3.org/2002/07/owl#sameAs", f"<http://dbpedia.org/resource/E{i}>")
        )
    if u[12] < 0.1:
        out.append(line(s, NS + "freebase.valuenotation.is_reviewed", ns(mid(i))))
    if u[13] < 0.05:
        out.append(line(s, NS + "location.location.time_zones", ns("en")))  # not an entity
    edges = 1 + int(rng.poisson(6))
    tails = zipf[1 : 1 + edges] % n
    rels = rng.integers(0, len(RELATIONS), edges)
    for t, r in zip(tails.tolist(), rels.tolist(), strict=True):
        if t != i:
            out.append(line(s, NS + RELATIONS[r], ns(mid(t))))
    if u[14] < 0.02 and len(out) > 1:
        out.append(out[-1])  # a duplicate fact
    return out


def schema_lines(k: int) -> list[str]:
    dom = list(DOMAINS)[k % len(DOMAINS)]
    t, props = DOMAINS[dom]
    typ = f"{dom}.{t}"
    out = [
        line(NS + typ, NS + "type.object.name", f'"{t.title()}"@en'),
        line(NS + typ, NS + "type.object.type", ns("type.type")),
    ]
    for p in props:
        out.append(line(NS + typ, NS + "type.type.properties", ns(f"{typ}.{p}")))
        out.append(line(NS + f"{typ}.{p}", NS + "type.property.schema", ns(typ)))
    return out


def generate(out: Path, lines: int, seed: int = 0) -> int:
    """Write exactly `lines` lines; returns the entity count. gzip level 1, mtime 0: the
    same arguments give the same bytes."""
    n = max(16, lines // 16)
    rng = np.random.default_rng(seed)
    written = 0
    with (
        open(out, "wb") as raw,
        gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=1, mtime=0) as f,
    ):
        i = 0
        while written < lines:
            batch: list[str] = []
            for _ in range(1024):
                if i % 997 == 0:
                    batch += schema_lines(i // 997)
                zipf = rng.zipf(1.6, 32)
                batch += entity_lines(i % n, n, rng, zipf)
                i += 1
            batch = batch[: lines - written]
            f.write(("\n".join(batch) + "\n").encode())
            written += len(batch)
    return n


def clean(dump: Path, out: Path, lang: str = "en") -> int:
    """The reference cleaning, one line at a time: entity-to-entity facts between m./g.
    ids whose relation no rule drops, plus type.object.name literals in `lang` (or a
    variant, or untagged), as N-Triples. Returns the number of lines written."""
    drop_prefixes = ("type.", "common.", "freebase.")
    kept = 0
    with gzip.open(dump, "rt", encoding="utf-8") as f, open(out, "w", encoding="utf-8") as w:
        for text in f:
            s, p, o, dot = text.rstrip("\n").split("\t")
            assert dot == "."
            if not s.startswith(f"<{NS}m.") and not s.startswith(f"<{NS}g."):
                continue
            if p == f"<{NS}type.object.name>":
                tag = o.rsplit('"', 1)[1]
                tag = tag[1:].lower() if tag.startswith("@") else ""
                if tag in ("", lang) or tag.startswith(lang + "-"):
                    w.write(f"{s} {p} {o} .\n")
                    kept += 1
                continue
            if not p.startswith(f"<{NS}") or p[len(NS) + 1 :].startswith(drop_prefixes):
                continue
            if o.startswith(f"<{NS}m.") or o.startswith(f"<{NS}g."):
                w.write(f"{s} {p} {o} .\n")
                kept += 1
    return kept


def questions(store: Path, out: Path, n: int, seed: int = 0, max_answers: int = 20) -> int:
    """`n` WebQSP-form questions (`Parses` with topic and answer MIDs) from a store: a
    random topic with out-edges, a random 1- or 2-hop forward relation path, every entity
    it reaches as the gold answers (at most `max_answers`; busier paths are redrawn)."""
    import json

    from kgreason.kg.store.format import StringTable

    ptr = np.load(store / "fwd.indptr.npy", mmap_mode="r")
    rel = np.load(store / "fwd.rel.npy", mmap_mode="r")
    dst = np.load(store / "fwd.dst.npy", mmap_mode="r")
    keys, labels = StringTable.open(store, "keys"), StringTable.open(store, "labels")
    unnamed = np.load(store / "unnamed.npy", mmap_mode="r")
    relations = json.loads((store / "relations.json").read_text())
    rng = np.random.default_rng(seed)
    deg = np.diff(ptr)

    def step(nodes: np.ndarray, r: int) -> np.ndarray:
        out = [dst[ptr[x] : ptr[x + 1]][rel[ptr[x] : ptr[x + 1]] == r] for x in nodes.tolist()]
        return np.unique(np.concatenate(out)) if out else np.zeros(0, np.int64)

    rows: list[dict[str, object]] = []
    while len(rows) < n:
        topic = int(rng.integers(0, len(deg)))
        if deg[topic] == 0 or unnamed[topic]:
            continue
        hops = 1 + int(rng.random() < 0.5)
        frontier, path = np.array([topic]), []
        for _ in range(hops):
            edges = rel[ptr[frontier[0]] : ptr[frontier[0] + 1]]
            if len(edges) == 0:
                break
            r = int(edges[rng.integers(0, len(edges))])
            path.append(relations[r])
            frontier = step(frontier, r)
        if len(path) < hops or not 0 < len(frontier) <= max_answers:
            continue
        name = labels[topic]
        words = " then ".join(p.rsplit(".", 1)[-1].replace("_", " ") for p in path)
        answers = [
            {"AnswerType": "Entity", "AnswerArgument": keys[a], "EntityName": labels[a]}
            for a in frontier.tolist()
        ]
        rows.append(
            {
                "QuestionId": f"synth-{len(rows)}",
                "RawQuestion": f"what is the {words} of {name}?",
                "Parses": [
                    {
                        "TopicEntityMid": keys[topic],
                        "TopicEntityName": name,
                        "InferentialChain": path,
                        "Answers": answers,
                    }
                ],
            }
        )
    out.write_text(json.dumps({"Questions": rows}, indent=1))
    return len(rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--clean", type=Path, help="write the reference cleaning of this dump")
    ap.add_argument("--questions", type=Path, help="write N WebQSP-form questions from this store")
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()
    if a.questions:
        print(f"{a.out}: {questions(a.questions, a.out, a.n, a.seed):,} questions")
    elif a.clean:
        print(f"{a.out}: {clean(a.clean, a.out):,} lines kept")
    else:
        print(f"{a.out}: {a.lines:,} lines, {generate(a.out, a.lines, a.seed):,} entities")
    return 0


if __name__ == "__main__":
    sys.exit(main())
