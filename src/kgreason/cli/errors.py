"""The command group that keeps the CLI's promise on errors: one `error: ...` line on
stderr and a non-zero exit, whatever went wrong (a usage error, a typed error the command
named with `fail`, or a bug), with the traceback only under -v. It also shows boolean
flags as flags in --help (`--json`, not `--json <bool>`)."""

from __future__ import annotations

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


class CLIGroup(TyperGroup):
    """TyperGroup with one-line errors (root) and flag-style help (every level)."""

    def get_params(self, ctx: ck.Context) -> list[ck.Parameter]:
        params = super().get_params(ctx)
        _flags_as_flags(params)
        return params

    def get_command(self, ctx: ck.Context, cmd_name: str) -> Any:
        cmd = super().get_command(ctx, cmd_name)
        if cmd is not None and not isinstance(cmd, TyperGroup):
            help_option = cmd.get_help_option(ctx)  # made once, cached by the command
            _flags_as_flags([*cmd.params, *([help_option] if help_option else [])])
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
