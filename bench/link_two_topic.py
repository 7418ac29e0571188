"""Two-entity conjunctive questions on the made-up football KG (tests/fixtures/football):
topic linking of names typed with spaces, and whether LLM-free candidates depend on the
order of the topic entities (issue 16). Prints figures; asserts nothing.

For every (nationality, club) pair with a player: "which {country} footballer plays for the
club {Club Name} ?" (underscores typed as spaces). Reported: questions whose unbracketed
linking found exactly both topic entities; candidate Hits@1 and gold-among-candidates with
the topics given in each order; questions whose candidate lists are identical in both orders.
Run from the repo root (any kgreason revision with `run_llm_free(..., topic ids)`):
    python bench/link_two_topic.py [--embedder static|minilm] [--penalty 0.02]
"""

from __future__ import annotations

import argparse
import asyncio
from collections import defaultdict
from pathlib import Path

from kgreason.embed.factory import build_embedder
from kgreason.embed.settings import EmbedSettings
from kgreason.kg.memory import MemoryKG
from kgreason.pog.fuzzy import FuzzySelector
from kgreason.pog.llm_free import link_by_name, run_llm_free
from kgreason.pog.settings import PoGSettings

KB = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "football" / "kb.tsv"


def questions(rows: list[list[str]]) -> list[tuple[str, str, str, set[str]]]:
    plays: dict[str, set[str]] = defaultdict(set)
    nat: dict[str, str] = {}
    for h, r, t in rows:
        if r == "plays_for":
            plays[t].add(h)
        elif r == "nationality":
            nat[h] = t
    out = []
    for club, players in sorted(plays.items()):
        for country in sorted({nat[p] for p in players}):
            gold = {p for p in players if nat[p] == country}
            q = f"which {country} footballer plays for the club {club.replace('_', ' ')} ?"
            out.append((q, country, club, gold))
    return out


async def main(embedder: str, penalty: float) -> None:
    rows = [line.split("\t") for line in KB.read_text("utf-8").splitlines()]
    kg = MemoryKG([(h, r, t) for h, r, t in rows])
    fz = FuzzySelector(build_embedder(EmbedSettings(backend=embedder)))
    s = PoGSettings(llm_free_length_penalty=penalty)
    qs = questions(rows)
    linked = hit_ab = hit_ba = gold_ab = gold_ba = same = 0
    for q, a, b, gold in qs:
        found = [t.id for t in await link_by_name(kg, q)]
        linked += sorted(found) == sorted([a, b])
        c1 = [c.id for c in (await run_llm_free(kg, fz, s, q, [a, b])).candidates]
        c2 = [c.id for c in (await run_llm_free(kg, fz, s, q, [b, a])).candidates]
        hit_ab += bool(c1) and c1[0] in gold
        hit_ba += bool(c2) and c2[0] in gold
        gold_ab += bool(set(c1) & gold)
        gold_ba += bool(set(c2) & gold)
        same += c1 == c2
    n = len(qs)
    print(f"{n} two-entity questions, embedder {embedder}, length penalty {penalty}")
    print(f"  both topics linked exactly from the unbracketed question: {linked}/{n}")
    print(f"  candidate Hits@1: topics (country, club) {hit_ab}/{n}, (club, country) {hit_ba}/{n}")
    print(f"  gold among candidates: {gold_ab}/{n}, {gold_ba}/{n}")
    print(f"  identical candidate lists in both orders: {same}/{n}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--embedder", default="static")
    ap.add_argument("--penalty", type=float, default=PoGSettings().llm_free_length_penalty)
    args = ap.parse_args()
    asyncio.run(main(args.embedder, args.penalty))
