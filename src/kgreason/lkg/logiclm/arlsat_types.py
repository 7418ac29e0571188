"""Values and the declaration environment shared by the AR-LSAT DSL translator."""

from __future__ import annotations

from dataclasses import dataclass, field

from kgreason.lkg.logiclm.pyexpr import Node
from kgreason.lkg.solvers.base import ProgramFormatError

#: combinations one scoped form may expand to
MAX_INSTANCES = 20000
#: terms one program may expand to in total
MAX_TERMS = 500_000


@dataclass(frozen=True)
class Val:
    """typ: "Bool", "Int" or the name of an enum sort."""

    typ: str
    smt: str


@dataclass
class Env:
    """Declarations visible to expressions."""

    #: enum sort name -> member names
    sorts: dict[str, list[str]] = field(default_factory=dict)
    #: list name -> member values (enum sorts, integer lists, sub-lists)
    lists: dict[str, list[Val]] = field(default_factory=dict)
    #: name -> (argument types, result type)
    functions: dict[str, tuple[list[str], str]] = field(default_factory=dict)
    #: enum constant / integer variable name -> value
    constants: dict[str, Val] = field(default_factory=dict)
    sublists: set[str] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)
    #: the notes already taken: a scan of `notes` per note was quadratic (one note per
    #: ignored declaration line)
    noted: set[str] = field(default_factory=set, repr=False)

    def note(self, text: str) -> None:
        if text not in self.noted:
            self.noted.add(text)
            self.notes.append(text)


def err(msg: str, kind: str) -> ProgramFormatError:
    return ProgramFormatError(msg, kind=kind)


def to_int(v: Val) -> str:
    if v.typ == "Int":
        return v.smt
    if v.typ == "Bool":
        return f"(ite {v.smt} 1 0)"
    raise err(f"{v.smt} of sort {v.typ} used as a number", "type_error")


def scoped(args: tuple[Node, ...]) -> bool:
    """Does the argument list start with a `[v:scope, ...]` binder list?"""
    return bool(args) and args[0].kind == "list" and any(a.kind == "binder" for a in args[0].args)
