"""Fallback when no z3 binary ships: evaluate an SMT-LIB 2 file with the z3 library's own
command interpreter (Z3_eval_smtlib2_string), in a sandboxed subprocess. Only SMT-LIB
text is evaluated; no Python from the program is ever run."""

from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    import z3

    with open(argv[1], encoding="utf-8") as fh:
        text = fh.read()
    ctx = z3.Context()
    try:
        out = z3.Z3_eval_smtlib2_string(ctx.ref(), text)
    except z3.Z3Exception as exc:  # raised on the first error; carries the output so far
        msg = exc.value.decode() if isinstance(exc.value, bytes) else str(exc.value)
        sys.stdout.write(msg if "(error " in msg else f'(error "{msg}")\n')
        return 1
    sys.stdout.write(out)
    return 1 if "(error " in out else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
