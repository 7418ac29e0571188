"""Native Prover9 (LADR) input: its `formulas(name). ... end_of_list.` lists and formulas.

Why a hand-made scan: the lists were found with `formulas\\(\\s*(\\w+)\\s*\\)\\s*\\.(.*?)
end_of_list\\s*\\.` (re.S), whose lazy body runs to the end of the text from every
`formulas(` that no `end_of_list.` follows, so `"formulas(a)." * 7000` held the GIL for
seconds. This scan finds the same lists (the leftmost header, then the first end after it)
in one pass: once no `end_of_list.` follows a header, none follows any later header either,
so it stops there. One reader for `programs.run_program` and the pipeline's executor.
"""

from __future__ import annotations

import re

from kgreason.lkg.solvers.base import ProgramFormatError
from kgreason.lkg.solvers.screens import screen_ladr_outside

_HEAD = re.compile(r"formulas\(\s*(\w+)\s*\)\s*\.")
_END = re.compile(r"end_of_list\s*\.")
_COMMENT = re.compile(r"%[^\n]*")
#: a clause ends at a period followed by white space or the end of its list
_CLAUSE_END = re.compile(r"\.(?=\s|$)")


def formula_lists(text: str) -> tuple[list[tuple[str, str]], str]:
    """The (name, body) of each list, in order, and the text outside every list."""
    lists: list[tuple[str, str]] = []
    outside: list[str] = []
    pos = kept = 0
    while (i := text.find("formulas(", pos)) >= 0:
        head = _HEAD.match(text, i)
        if head is None:
            pos = i + 1
            continue
        end = _END.search(text, head.end())
        if end is None:
            break
        lists.append((head.group(1), text[head.end() : end.start()]))
        outside.append(text[kept:i])
        pos = kept = end.end()
    outside.append(text[kept:])
    return lists, "".join(outside)


def read_ladr(text: str) -> tuple[list[str], str, list[str]]:
    """(premises, goal, notes) of a native Prover9 input: the formulas of its assumptions
    and sos lists, and the one formula of formulas(goals). Raises ProgramFormatError
    (kind "refused" for commands outside the lists, "bad_goal" unless one goal)."""
    lists, outside = formula_lists(text)
    refused = screen_ladr_outside(outside)
    if refused:  # assign/set/clear outside the lists would change the search
        raise ProgramFormatError(refused, kind="refused")
    blocks: dict[str, list[str]] = {}
    for name, body in lists:
        clauses = _CLAUSE_END.split(_COMMENT.sub("", body))
        blocks.setdefault(name, []).extend(f.strip() for f in clauses if f.strip())
    goals = blocks.get("goals", [])
    if len(goals) != 1:
        raise ProgramFormatError(
            f"expected exactly one formula in formulas(goals), found {len(goals)}",
            kind="bad_goal",
        )
    return blocks.get("assumptions", []) + blocks.get("sos", []), goals[0], []
