"""Per-language screens: refuse engine commands that touch files or the engine's settings.

Each screen reads the program with a tokenizer that follows the engine's own lexical rules
and returns a reason ("refused: ...") or None. Text the tokenizer cannot read is refused,
never skipped: a screen that gives up on a form it does not understand lets whatever
follows reach the engine unchecked. The sandbox's filesystem isolation is the second
layer; these screens keep the engine's own commands (output channels, includes, LADR
`assign`, clingo `#script`) away from it in the first place.
"""

from __future__ import annotations

import re

from kgreason.lkg.solvers.sexpr import SExprError, forms, tokenize

# ---- SMT-LIB (Z3) -------------------------------------------------------------------
#: Commands Z3 may run from a program. Anything else (include, set-param, z3's debug
#: commands) is refused.
SMT_COMMANDS = frozenset(
    [
        "assert",
        "assert-soft",
        "check-sat",
        "check-sat-assuming",
        "check-sat-using",
        "declare-const",
        "declare-datatype",
        "declare-datatypes",
        "declare-fun",
        "declare-sort",
        "define-const",
        "define-fun",
        "define-fun-rec",
        "define-funs-rec",
        "define-sort",
        "echo",
        "eval",
        "exit",
        "get-assertions",
        "get-assignment",
        "get-info",
        "get-model",
        "get-objectives",
        "get-option",
        "get-proof",
        "get-unsat-assumptions",
        "get-unsat-core",
        "get-value",
        "maximize",
        "minimize",
        "pop",
        "push",
        "reset",
        "reset-assertions",
        "set-info",
        "set-logic",
        "set-option",
        "simplify",
        "apply",
        "display",
    ]
)
#: Option names that name or open files, or change where output goes.
_FILE_OPTION = re.compile(r"(file|channel|log|trace|dump|drat|path|dir|save|output)", re.I)


def screen_smtlib(program: str) -> str | None:
    """Reason to refuse an SMT-LIB program, or None."""
    try:
        toks = tokenize(program, strict=True)
        spans = forms(toks, program)
    except SExprError as e:  # "parse_error: ..." (unbalanced) stays a syntax error
        return str(e) if str(e).startswith("parse_error:") else f"refused: {e}"
    for first, last in spans:
        t = toks[first]
        if t.kind != "(":
            return f"refused: stray {t.text[:40]!r} at top level (every command is a (...) form)"
        if last - first < 2 or toks[first + 1].kind not in ("symbol", "quoted"):
            return f"refused: a top-level form at offset {t.start} names no command"
        head = toks[first + 1].text
        if head not in SMT_COMMANDS:
            return f"refused: ({head} ...) is not an allowed SMT-LIB command"
        for tok in toks[first + 2 : last]:
            if tok.kind == "keyword" and _FILE_OPTION.search(tok.text):
                return f"refused: option {tok.text} writes or reads files"
            if (
                head == "set-option"
                and tok.kind in ("string", "quoted")
                and _FILE_OPTION.search(tok.text)
            ):
                return f"refused: (set-option ... {tok.text[:40]}) names a file"
    return None


# ---- Prover9 / LADR -----------------------------------------------------------------
#: LADR words that end a list or open one; with '.' refused they cannot act, but a
#: formula that holds one is an attempt, not a formula.
_LADR_COMMANDS = re.compile(r"\b(end_of_list)\b|\b(formulas|clauses)\s*\(")


def screen_ladr_formula(formula: str) -> str | None:
    """Reason to refuse one LADR formula (written without its final period), or None.

    LADR ends a clause at `.` and comments run from `%` to the end of the line, so a
    formula holding either could close its list and smuggle commands
    (`P(a).end_of_list%x` then `.` on the next line). Quoted names ("...") are read as
    LADR reads them; an unterminated one is refused."""
    i, n = 0, len(formula)
    while i < n:
        c = formula[i]
        if c == '"':
            j = formula.find('"', i + 1)
            if j < 0:
                return "refused: unterminated quoted name in a Prover9 formula"
            i = j + 1
            continue
        if c == "%":
            return "refused: '%' (a LADR comment) inside a Prover9 formula"
        if c == ".":
            return "refused: '.' (the LADR clause terminator) inside a Prover9 formula"
        if c == "\x00" or (c < " " and c not in "\t\r\n"):
            return f"refused: control character {c!r} in a Prover9 formula"
        i += 1
    m = _LADR_COMMANDS.search(_unquoted(formula))
    if m:
        word = m.group(1) or m.group(2)
        return f"refused: LADR command word {word!r} inside a Prover9 formula"
    return None


def _unquoted(text: str) -> str:
    return re.sub(r'"[^"]*"', '""', text)


def screen_ladr_outside(text: str) -> str | None:
    """Reason to refuse the text of a native Prover9 input that lies outside its
    formulas(...) lists (after comments are removed), or None: options there
    (assign/set/clear) would change the search, so none is accepted."""
    rest = _unquoted(re.sub(r"%[^\n]*", "", text)).strip()
    if rest:
        return f"refused: Prover9 command outside a formulas(...) list: {rest[:60]!r}"
    return None


# ---- ASP (clingo) -------------------------------------------------------------------
_ASP_DIRECTIVES_OK = frozenset(
    {"#show", "#const", "#minimize", "#maximize", "#minimise", "#maximise", "#count",
     "#sum", "#sum+", "#min", "#max", "#inf", "#sup", "#true", "#false", "#heuristic",
     "#project", "#edge", "#defined", "#program"}
)  # fmt: skip


_DIRECTIVE = re.compile(r"#[A-Za-z_]*\+?")


def screen_asp(program: str) -> str | None:
    """Reason to refuse a raw ASP program, or None.

    Read as clingo's lexer reads it: `%` line comments, `%* ... *%` block comments,
    strings "..." with backslash escapes. Every `#directive` outside those must be on the
    allow-list: `#script`, `#include`, `#external`, `#exec`, `#lua`, `#python` (code,
    files, or inputs set from outside) are refused, and so is anything unreadable."""
    i, n = 0, len(program)
    while i < n:
        c = program[i]
        if c == "%":
            if program.startswith("%*", i):
                j = program.find("*%", i + 2)
                if j < 0:
                    return "refused: unterminated %* block comment *%"
                i = j + 2
            else:
                j = program.find("\n", i)
                i = n if j < 0 else j + 1
        elif c == '"':
            j = i + 1
            while j < n and program[j] != '"':
                if program[j] == "\n":
                    return "refused: newline inside an ASP string"
                j += 2 if program[j] == "\\" else 1
            if j >= n:
                return "refused: unterminated string in the ASP program"
            i = j + 1
        elif c == "#":
            m = _DIRECTIVE.match(program, i)  # at i: a slice per '#' copied the rest
            word = m.group(0) if m else "#"
            if word.lower() not in _ASP_DIRECTIVES_OK:
                return f"refused: {word} directive (runs code, reads files or is unknown)"
            i += len(word)
        elif c == "\x00":
            return "refused: NUL byte in the ASP program"
        else:
            i += 1
    return None
