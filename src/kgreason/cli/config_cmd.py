"""`kgreason config`: the effective settings and where each value came from."""

from __future__ import annotations

import typer
from rich.table import Table

from kgreason.cli.common import JsonOption, console, emit_json, settings, want_json
from kgreason.config import flatten_keys

SECRET_KEYS = {"llm.api_key"}


def register(app: typer.Typer) -> None:
    @app.command("config")
    def config_command(ctx: typer.Context, json_out: JsonOption = False) -> None:
        """Show the effective settings and the source of each (default, file, env, cli)."""
        loaded = settings(ctx)
        flat = flatten_keys(loaded.settings.model_dump(mode="json"))
        rows = []
        for key in sorted(flat):
            value = flat[key]
            if key in SECRET_KEYS and value:
                value = "***"
            rows.append({"key": key, "value": value, "source": loaded.origins.get(key, "default")})
        if want_json(ctx, json_out):
            emit_json(rows)
            return
        table = Table("setting", "value", "source")
        for r in rows:
            table.add_row(r["key"], str(r["value"]), r["source"])
        console().print(table)
