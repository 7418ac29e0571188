"""Recent results, kept so that a client can page through the sets a reply shows in part.

Why: a reply holds the first members of each large set and its full count (and at most
`MAX_REPLY_ANSWERS` answers), so that a hub question's reply stays well under a megabyte.
The rest is one GET away: `/v1/results/{id}/sets/{k}` and `/v1/results/{id}/answers`.

What is kept: per result, each path's sets in full, in the order the reply shows them
(`PoGResult.member_sets()`; on a large KG these are id arrays that decode a page's names
only), and the answers. The last `capacity` results are kept, oldest dropped first; a page
of a dropped result is a 404 `unknown-result`.

Sets are numbered along the paths: path p's set at position j (0: its first hop's src;
j + 1: hop j's dst) is k = (sets of the paths before p) + j.

Under `kgreason serve --workers N` each process keeps its own results; a result id names the
worker that holds it. The kernel hands a connection to one worker, so a client that pages on
the connection it asked on (HTTP keep-alive) reaches the same one.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from kgreason.server.errors import ServiceError

if TYPE_CHECKING:
    from kgreason import AnswerEntity, PoGResult

T = TypeVar("T")

#: answers a reply holds at most; the rest by /v1/results/{id}/answers
MAX_REPLY_ANSWERS = 1000
#: members a page holds at most, and by default
MAX_PAGE, DEFAULT_PAGE = 1000, 100


@dataclass(frozen=True)
class KeptSet:
    path: int
    position: int
    members: Sequence[str]


@dataclass(frozen=True)
class Kept:
    sets: list[KeptSet]
    answers: list[AnswerEntity]


class ResultPages:
    """The last `capacity` results of this process, by id."""

    def __init__(self, capacity: int = 32, worker: int | None = None):
        self.capacity, self.worker = capacity, worker
        self._kept: OrderedDict[str, Kept] = OrderedDict()

    def keep(self, result: PoGResult) -> str:
        """Keep a result; its id."""
        sets = [
            KeptSet(p, j, members)
            for p, path_sets in enumerate(result.member_sets())
            for j, members in enumerate(path_sets)
        ]
        rid = uuid.uuid4().hex if self.worker is None else f"w{self.worker}-{uuid.uuid4().hex}"
        self._kept[rid] = Kept(sets, list(result.answers))
        while len(self._kept) > self.capacity:
            self._kept.popitem(last=False)
        return rid

    def get(self, rid: str) -> Kept:
        kept = self._kept.get(rid)
        if kept is not None:
            self._kept.move_to_end(rid)
            return kept
        where = ""
        if rid.startswith("w") and "-" in rid and self.worker is not None:
            other = rid[1 : rid.index("-")]
            if other.isdigit() and int(other) != self.worker:
                where = (
                    f"; it is held by worker {other} of `kgreason serve --workers`, and this "
                    f"is worker {self.worker}: page on the connection that asked (keep-alive)"
                )
        raise ServiceError(
            "unknown-result",
            f"no result {rid[:80]!r} here: results are kept for the last {self.capacity} "
            f"questions{where}",
            404,
        )


def pages_block(rid: str, data: dict[str, Any], kept: Kept) -> dict[str, Any]:
    """The reply's `pages`: a link for the answers when the reply holds only the first, and
    one per set shown in part (its k, where it is, its full and shown sizes)."""
    base = f"/v1/results/{rid}"
    shown_sets = []
    for k, s in enumerate(kept.sets):
        hops = data["paths"][s.path]["hops"]
        shown = len(hops[0]["src"]) if s.position == 0 else len(hops[s.position - 1]["dst"])
        if shown < len(s.members):
            shown_sets.append(
                {"path": s.path, "position": s.position, "k": k, "total": len(s.members),
                 "shown": shown, "href": f"{base}/sets/{k}"}
            )  # fmt: skip
    cut = data.get("answers_total", 0) > len(data.get("answers") or ())
    return {"answers": f"{base}/answers" if cut else None, "sets": shown_sets}


def bounded(result: PoGResult) -> tuple[PoGResult, dict[str, int]]:
    """The result a reply shows: its first MAX_REPLY_ANSWERS answers and candidates (a copy;
    the kept result pages through the rest), and their full counts."""
    totals = {"answers_total": len(result.answers), "candidates_total": len(result.candidates)}
    if max(totals.values()) <= MAX_REPLY_ANSWERS:
        return result, totals
    cut = dataclasses.replace(
        result,
        answers=result.answers[:MAX_REPLY_ANSWERS],
        candidates=result.candidates[:MAX_REPLY_ANSWERS],
    )
    return cut, totals


def page(
    members: Sequence[T], offset: int, limit: int, href: str
) -> tuple[Sequence[T], str | None]:
    """(the members of one page, the next page's link or None)."""
    got = members[offset : offset + limit]
    end = offset + len(got)
    return got, (f"{href}?offset={end}&limit={limit}" if end < len(members) else None)
