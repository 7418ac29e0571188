"""Engine texts shown to callers without the host's name, user or internal paths.

Why: `/v1/solve` returns each engine's error, stdout and stderr. Prover9's banner names
the user and the host (`Process 2 was started by root on web-1,`) and the binary's path
(`/tmp/kgr-bin-0/...`: uid 0); tracebacks of the Python workers name the interpreter,
site-packages and kgreason's own directory; sandbox messages name the run's temp dir.
Only the texts shown are rewritten, after the verdict, model and proof were read from the
engine's output.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from kgreason.lkg.solvers.base import SolverResult
from kgreason.lkg.solvers.isolation import python_read_paths

_BANNER = re.compile(r"(Process \d+ was started by )[^\n]*")
#: a path (or host name) ends where a path-name character does not follow
_AFTER = r"(?![\w.+-])"
_BEFORE = r"(?<![\w.-])"


def _internal() -> tuple[re.Pattern[str], list[str]]:
    """One pattern for every internal path (most specific first), with the placeholder of
    each alternative."""
    tmps = sorted({tempfile.gettempdir(), os.path.realpath(tempfile.gettempdir())})
    alts: list[tuple[str, str]] = []
    for t in tmps:
        alts += [(re.escape(t) + r"/kgr-solver-[\w.-]+", "<sandbox>")]
        alts += [(re.escape(t) + r"/kgr-bin-\d+", "<bin>")]
    here = Path(__file__).resolve().parents[2]  # the kgreason package
    named = [(p, "<python>") for p in python_read_paths()]
    named += [(str(here), "<kgreason>"), *((t, "<tmp>") for t in tmps)]
    home = str(Path.home())
    if home != "/":
        named.append((home, "<home>"))
    for path, label in sorted(named, key=lambda x: -len(x[0])):
        alts.append((re.escape(path.rstrip("/")), label))
    pattern = "|".join(f"(?P<g{i}>{rx})" for i, (rx, _) in enumerate(alts))
    return re.compile(f"{_BEFORE}(?:{pattern}){_AFTER}"), [label for _, label in alts]


def redact(text: str) -> str:
    """`text` with the Prover9 banner's user and host and every internal path replaced by
    placeholders (<user>, <host>, <sandbox>, <bin>, <python>, <kgreason>, <tmp>, <home>).
    The host name is replaced where an engine prints it (the banner), not as a word
    anywhere: an error naming a symbol that equals the host name would be garbled."""
    if not text:
        return text
    text = _BANNER.sub(r"\1<user> on <host>,", text)
    pattern, labels = _internal()
    return pattern.sub(lambda m: labels[int((m.lastgroup or "g0")[1:])], text)


def redact_result(res: SolverResult) -> SolverResult:
    """The engine texts of `res` a caller sees (error, stdout, stderr, per-option errors),
    redacted. An "unavailable" error is kgreason's own diagnosis of the host (which path
    the sandbox user cannot read, and the fix) and is kept as it is."""
    if res.error and res.status != "unavailable":
        res.error = redact(res.error)
    res.stdout, res.stderr = redact(res.stdout), redact(res.stderr)
    errors = res.details.get("option_errors")
    if isinstance(errors, dict):
        res.details["option_errors"] = {k: redact(str(v)) for k, v in errors.items()}
    return res
