"""The `--embedder` option shared by `ask`, `eval`, `lkg` and `serve`: picks `embed.backend` for one
command (a flag overrides the config file and KGREASON_EMBED__BACKEND)."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape

#: typer renders help as rich markup, where `[sbert]` is a style tag and vanished
#: ("needs kgreason."): escaped, it prints as written
EMBEDDER_HELP = escape(
    "Embedding backend: minilm (default; all-MiniLM-L6-v2 without torch) | static (fastest) "
    "| sentence-transformers or sbert (torch; needs kgreason[sbert])."
)

EmbedderOption = Annotated[
    str | None, typer.Option("--embedder", help=EMBEDDER_HELP, show_default=False)
]


def embedder_override(embedder: str | None) -> dict[str, str | None]:
    """The settings override for a `--embedder` value (None = keep the configured one)."""
    return {"embed.backend": embedder}
