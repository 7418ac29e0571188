"""Answer options ("A) True", "(c) The computer in office 2"): how they are split and what
kind of question they make. The router, the solver adapters, `run_program` and the
pipeline all read options, so the reading lives here, below all of them."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Literal

OptionsKind = Literal["none", "tf", "tfu", "statements"]

#: Logic-LM's letters for True / False / Unknown per dataset.
TFU_LETTERS: Mapping[str, tuple[str, str, str]] = MappingProxyType(
    {"ProntoQA": ("A", "B", "B"), "ProofWriter": ("A", "B", "C"), "FOLIO": ("A", "B", "C")}
)
_OPTION_PREFIX = re.compile(r"^\s*\(?([A-Za-z])\s*[\).:]\s*")


def split_option(opt: str) -> tuple[str, str]:
    """'A) True' -> ('A', 'True'); an option with no letter gets none ('', text)."""
    m = _OPTION_PREFIX.match(opt)
    return (m.group(1).upper(), opt[m.end() :].strip()) if m else ("", opt.strip())


def options_kind(options: Sequence[str] | None) -> OptionsKind:
    """True/False options, True/False/Unknown options, or free-text statements."""
    if not options:
        return "none"
    texts = {split_option(o)[1].strip(" .").lower() for o in options}
    if texts <= {"true", "false"}:
        return "tf"
    if texts <= {"true", "false", "unknown", "uncertain"}:
        return "tfu"
    return "statements"


def tfu_letter(
    value: str | None, options: Sequence[str] | None, dataset: str | None = None
) -> str | None:
    """Letter of the option saying True/False/Unknown (Unknown also matches Uncertain);
    without options, Logic-LM's letters for `dataset`."""
    if value is None:
        return None
    if options and options_kind(options) != "statements":
        want = {"unknown": {"unknown", "uncertain"}}.get(value.lower(), {value.lower()})
        for i, o in enumerate(options):
            letter, body = split_option(o)
            if body.strip(" .").lower() in want:
                return letter or chr(65 + i)
        return None
    if dataset is not None and dataset in TFU_LETTERS:
        return TFU_LETTERS[dataset][("True", "False", "Unknown").index(value)]
    return None
