"""What every CLI command shares: global options, settings loading, output and failure."""

from __future__ import annotations

import json
import logging
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.text import Text

from kgreason.cli.clickcompat import Context, get_current_context
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


def options(ctx: Context) -> GlobalOptions:
    root = ctx.find_root()
    if not isinstance(root.obj, GlobalOptions):
        root.obj = GlobalOptions()
    return root.obj


def verbosity() -> int:
    """-v count of the running command (0 outside a command, e.g. in library use)."""
    ctx = get_current_context(silent=True)
    return options(ctx).verbose if ctx is not None else 0


def console() -> Console:
    return Console(highlight=False)


def err_console() -> Console:
    return Console(stderr=True, highlight=False)


def one_line(message: str) -> str:
    """Messages from exceptions may span lines (server bodies, tracebacks): fold them."""
    return " ".join(str(message).split()) or "(no message)"


def print_error(message: str, *, detail: str | None = None, verbose: int = 0) -> None:
    """`error: MESSAGE` as exactly one stderr line; with -v, the detail (or the traceback
    of the exception being handled) follows on the lines after it."""
    line = Text("error: ", style="bold red")
    line.append(one_line(message))  # Text, not markup: "[Once Were Warriors]" stays as typed
    err_console().print(line, soft_wrap=True)
    if verbose <= 0:
        return
    if detail is None and sys.exc_info()[0] is not None:
        detail = traceback.format_exc()
    if detail:
        sys.stderr.write(detail.rstrip("\n") + "\n")


def fail(message: str, code: int = 1, *, detail: str | None = None) -> NoReturn:
    """End the command with one clear line on stderr and a non-zero exit (more with -v)."""
    print_error(message, detail=detail, verbose=verbosity())
    raise typer.Exit(code)


def settings(ctx: typer.Context, **cli_overrides: Any) -> LoadedSettings:
    """Effective settings for this command: defaults < file < env < the command's flags."""
    try:
        loaded = load_settings(
            options(ctx).config, cli_overrides, cli_flags=_flags(ctx, cli_overrides)
        )
    except ConfigError as e:
        fail(str(e))
    from kgreason.pog.pruning import UnknownStrategy, default_strategies

    s = loaded.settings
    try:  # settings check names only; the CLI's pipelines use the built-in registry
        canonical = default_strategies().canonical(s.pog.strategy)
    except UnknownStrategy as e:
        fail(f"pog.strategy: {e}")
    if canonical != s.pog.strategy:  # an alias is recorded (eval runs, config) by its target
        pog = s.pog.model_copy(update={"strategy": canonical})
        loaded.settings = s.model_copy(update={"pog": pog})
    return loaded


def _flags(ctx: Context, overrides: dict[str, Any]) -> dict[str, str]:
    """Setting -> the option that gave its value, so a bad value's error names the flag:
    matched by value among the command's options, when exactly one holds it."""
    out: dict[str, str] = {}
    params = [p for p in ctx.command.params if p.param_type_name == "option" and p.opts]
    for key, value in overrides.items():
        if value is None or isinstance(value, bool):
            continue
        hits = [p for p in params if p.name is not None and ctx.params.get(p.name) == value]
        if len(hits) == 1:
            out[key] = hits[0].opts[0]
    return out


def emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to the *current* sys.stderr, so one process running several commands (tests,
    notebooks) logs each to the stderr of its time."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property  # type: ignore[override]
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, _value: Any) -> None:
        pass


def setup_logging(verbose: int) -> None:
    """-v: each stage of `kgreason.*` with its timing (INFO); -vv: also each LLM, SPARQL
    and solver call (DEBUG). Other libraries log warnings only. One handler on the root
    logger, replaced (not added) when a second command runs in the same process."""
    root = logging.getLogger()
    for h in [h for h in root.handlers if isinstance(h, _StderrHandler)]:
        root.removeHandler(h)
    handler = _StderrHandler()
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root.addHandler(handler)
    if root.level == logging.NOTSET or root.level > logging.WARNING:
        root.setLevel(logging.WARNING)
    level = logging.NOTSET if verbose <= 0 else logging.INFO if verbose == 1 else logging.DEBUG
    logging.getLogger("kgreason").setLevel(level)


def hoist_verbose(args: list[str]) -> list[str]:
    """`kgreason ask -vv ...` means `kgreason -vv ask ...`: -v/--verbose given after the
    command name (before any `--`) move to the front, where the root option reads them."""
    end = args.index("--") if "--" in args else len(args)
    flags = [a for a in args[:end] if a == "--verbose" or (len(a) > 1 and a.strip("v") == "-")]
    if not flags:
        return args
    rest = [a for a in args[:end] if a not in flags]
    return [*flags, *rest, *args[end:]]
