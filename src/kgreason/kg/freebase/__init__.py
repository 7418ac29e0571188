"""Freebase without a SPARQL server: the published dump read as it is (parse.py), cleaned
by rules with their sources (rules.py), into a store built in bounded memory (build.py)."""

from kgreason.kg.freebase.build import DumpOptions, build_freebase
from kgreason.kg.freebase.rules import RULES, Cleaning
from kgreason.kg.freebase.state import ResumeError

__all__ = ["RULES", "Cleaning", "DumpOptions", "ResumeError", "build_freebase"]
