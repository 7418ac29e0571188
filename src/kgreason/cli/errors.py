"""The command group that keeps the CLI's promise on errors: one `error: ...` line on
stderr and a non-zero exit, whatever went wrong (a usage error, a typed error the command
named with `fail`, or a bug), with the traceback only under -v. It also tidies --help:
boolean flags show as flags (`--json`, not `--json <bool>`), a command's one-line
description is its docstring's whole first paragraph (typer's rich list kept the
docstring's line breaks, so it read as cut mid-sentence), and usage lines name arguments
click's way (`QUESTION`, `[OUT]`, `DOCS...`; typer writes `{question}`)."""

from __future__ import annotations

import inspect
import sys
from collections.abc import Sequence
from typing import Any

from typer.core import TyperGroup

from kgreason.cli import clickcompat as ck
from kgreason.cli.common import hoist_verbose, options, print_error

#: Exit status of a usage error (click's convention) and of an unexpected exception.
USAGE_EXIT = 2
INTERNAL_EXIT = 1


def _flags_as_flags(params: Sequence[ck.Parameter]) -> None:
    for p in params:
        flag = getattr(p, "is_flag", False) or getattr(p, "count", False)
        if p.param_type_name == "option" and flag and p.metavar is None:
            p.metavar = ""  # typer's rich help prints the metavar, else the type (<bool>)


def _usage_pieces(p: ck.Parameter) -> None:
    """An argument named in upper case (as its metavar) in usage and errors: NAME when
    required, [NAME] when not, NAME... when repeated."""
    if p.metavar is None:
        p.metavar = (p.name or "arg").upper()
    piece = p.metavar + ("..." if p.nargs != 1 else "")
    piece = piece if p.required else f"[{piece}]"
    p.get_usage_pieces = lambda ctx: [piece]  # type: ignore[method-assign]


def one_line_help(help_text: str | None) -> str | None:
    """A docstring's first paragraph on one line (the text after a \\f line never shown)."""
    if not help_text:
        return None
    first = inspect.cleandoc(help_text).partition("\f")[0].split("\n\n")[0]
    return " ".join(first.split()) or None


def unwrapped_help(help_text: str) -> str:
    """Each paragraph on one line (typer's rich help prints a docstring's line breaks as
    they are, mid-sentence); a paragraph starting with \\b keeps its layout."""
    paragraphs = inspect.cleandoc(help_text).split("\n\n")
    return "\n\n".join(p if p.startswith("\b") else " ".join(p.split()) for p in paragraphs)


def _tidy(cmd: Any, ctx: ck.Context) -> None:
    """Flag-style options, unwrapped help, a one-line short help and click-style usage for
    one command; a group that is not a CLIGroup (`train`) has its commands tidied too."""
    if getattr(cmd, "_kgreason_tidy", False):
        return
    cmd._kgreason_tidy = True
    if cmd.help:
        cmd.help = unwrapped_help(cmd.help)
    if isinstance(cmd, TyperGroup):
        if cmd.short_help is None:
            cmd.short_help = one_line_help(cmd.help)
        if not isinstance(cmd, CLIGroup):
            for sub in cmd.commands.values():
                _tidy(sub, ctx)
        return
    help_option = cmd.get_help_option(ctx)  # made once, cached by the command
    _flags_as_flags([*cmd.params, *([help_option] if help_option else [])])
    if cmd.short_help is None:
        cmd.short_help = one_line_help(cmd.help)
    for p in cmd.params:
        if p.param_type_name == "argument":
            _usage_pieces(p)


class CLIGroup(TyperGroup):
    """TyperGroup with one-line errors (root) and flag-style help (every level)."""

    def get_params(self, ctx: ck.Context) -> list[ck.Parameter]:
        params = super().get_params(ctx)
        _flags_as_flags(params)
        return params

    def get_command(self, ctx: ck.Context, cmd_name: str) -> Any:
        cmd = super().get_command(ctx, cmd_name)
        if cmd is not None:
            _tidy(cmd, ctx)
        return cmd

    def invoke(self, ctx: ck.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (ck.Exit, ck.Abort, ck.ClickException):
            raise
        except Exception as e:  # a bug or an error no command named: still one line
            if ctx.parent is not None:  # a nested group: the root reports it, once
                raise
            name = ctx.invoked_subcommand or ctx.info_name or "kgreason"
            print_error(
                f"{type(e).__name__}: {e} (unexpected, in `{name}`; -v shows the traceback)",
                verbose=options(ctx).verbose,
            )
            raise ck.Exit(INTERNAL_EXIT) from e

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        """Typer's main without its multi-line usage panels: run non-standalone and turn
        what it raises into one line and an exit status."""
        args = hoist_verbose(list(sys.argv[1:] if args is None else args))
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except ck.NoArgsIsHelpError as e:  # `kgreason kg`: typer has printed the help
            code = e.exit_code
        except ck.UsageError as e:
            hint = f" (see `{e.ctx.command_path} --help`)" if e.ctx is not None else ""
            print_error(e.format_message() + hint)
            code = e.exit_code or USAGE_EXIT
        except ck.ClickException as e:
            print_error(e.format_message())
            code = e.exit_code or 1
        except ck.Abort:
            print_error("aborted")
            code = 1
        else:
            code = rv if isinstance(rv, int) else 0
        if not standalone_mode:
            return code
        sys.exit(code)
