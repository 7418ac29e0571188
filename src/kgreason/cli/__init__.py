"""The `kgreason` command line. Each command group lives in its own module and registers here."""

from __future__ import annotations

from pathlib import Path

import typer

from kgreason.cli.common import GlobalOptions, setup_logging
from kgreason.cli.errors import CLIGroup

app = typer.Typer(
    name="kgreason",
    cls=CLIGroup,
    help="LLM reasoning grounded in knowledge graphs and checked by symbolic solvers.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


@app.callback()
def _root(
    ctx: typer.Context,
    config: Path | None = typer.Option(None, "--config", help="Settings file (TOML)."),
    json_out: bool = typer.Option(False, "--json", help="Machine-readable JSON output."),
    verbose: int = typer.Option(0, "--verbose", "-v", count=True, help="More logging (-vv)."),
) -> None:
    ctx.obj = GlobalOptions(config=config, json=json_out, verbose=verbose)
    setup_logging(verbose)


def _register() -> None:
    # Each module adds its commands to `app`; keep this list in one place.
    from kgreason.cli import ask, config_cmd, doctor, eval_cmd, kg, lkg, serve, solve, train

    for module in (ask, config_cmd, doctor, eval_cmd, kg, lkg, serve, solve, train):
        module.register(app)


_register()


def main() -> None:
    app()
