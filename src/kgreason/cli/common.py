"""What every CLI command shares: global options, settings loading, output and failure."""

from __future__ import annotations

import json
import logging
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console

from kgreason.config import ConfigError, LoadedSettings, load_settings


@dataclass
class GlobalOptions:
    config: Path | None = None
    json: bool = False
    verbose: int = 0


#: Every command also accepts --json after its name (`kgreason config --json`).
JsonOption = Annotated[bool, typer.Option("--json", help="Machine-readable JSON output.")]


def want_json(ctx: typer.Context, flag: bool) -> bool:
    return flag or options(ctx).json


def options(ctx: typer.Context) -> GlobalOptions:
    root = ctx.find_root()
    if not isinstance(root.obj, GlobalOptions):
        root.obj = GlobalOptions()
    return root.obj


def console() -> Console:
    return Console(highlight=False)


def err_console() -> Console:
    return Console(stderr=True, highlight=False)


def fail(message: str, code: int = 1) -> NoReturn:
    """End the command with one clear line on stderr and a non-zero exit."""
    err_console().print(f"[bold red]error:[/] {message}", soft_wrap=True)
    raise typer.Exit(code)


def settings(ctx: typer.Context, **cli_overrides: Any) -> LoadedSettings:
    """Effective settings for this command: defaults < file < env < the command's flags."""
    try:
        return load_settings(options(ctx).config, cli_overrides)
    except ConfigError as e:
        fail(str(e))


def emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


def setup_logging(verbose: int) -> None:
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
