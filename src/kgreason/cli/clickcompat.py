"""The click layer under typer: typer >= 0.20 vendors its own copy (`typer._click`), whose
contexts and exceptions differ from the `click` package's; older typer runs on `click`.
The CLI's error handling must catch the exceptions that are actually raised."""

from __future__ import annotations

import typer

try:
    from typer._click import exceptions as cx
    from typer._click.core import Context, Parameter
    from typer._click.globals import get_current_context
except ImportError:  # pragma: no cover - typer < 0.20 on the click package
    from click import (  # type: ignore[assignment,no-redef]
        Context,
        Parameter,
        get_current_context,
    )
    from click import exceptions as cx  # type: ignore[no-redef]

Exit = typer.Exit
Abort = typer.Abort
ClickException = cx.ClickException
UsageError = cx.UsageError
NoArgsIsHelpError = cx.NoArgsIsHelpError

__all__ = [
    "Abort",
    "ClickException",
    "Context",
    "Exit",
    "NoArgsIsHelpError",
    "Parameter",
    "UsageError",
    "get_current_context",
]
