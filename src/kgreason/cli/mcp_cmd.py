"""`kgreason mcp`: serve the MCP tools (ask, solve, kg_search, kg_neighbors, explain_answer)
over stdio, for an MCP client (an agent, an IDE) that starts this command itself.

The KG, the embedder and the LLM are loaded once, before the protocol starts, so a bad
setting ends the command with one clear line and a non-zero exit instead of a server that
dies mid-handshake. stdout carries only the protocol: from before the models load, fd 1
points at stderr and the protocol writes to a private duplicate (server/mcp_stdio.py)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, BinaryIO

import typer

from kgreason.cli.common import fail, settings

if TYPE_CHECKING:
    from kgreason.server.service import Service


async def _serve(service: Service, wire: tuple[BinaryIO, BinaryIO], max_bytes: int) -> None:
    from kgreason.server.mcp import build_server
    from kgreason.server.mcp_stdio import serve_stdio

    try:
        await serve_stdio(build_server(service), *wire, max_message_bytes=max_bytes)
    finally:
        await service.aclose()


def _part(e: Exception) -> str:
    """Which part failed to load, as `kgreason ask` names it."""
    import kgreason

    for cls, part in (
        (kgreason.KGError, "knowledge graph"),
        (kgreason.EmbedderError, "embedder"),
        (kgreason.LLMError, "LLM"),
        (kgreason.ConfigError, "settings"),
    ):
        if isinstance(e, cls):
            return part
    return type(e).__name__


def register(app: typer.Typer) -> None:
    @app.command("mcp")
    def mcp_command(
        ctx: typer.Context,
        kg: str | None = typer.Option(
            None, "--kg", help="KG store directory (default: the bundled MetaQA KG)."
        ),
        llm_free: bool = typer.Option(
            False, "--llm-free", help="Never call an LLM: `ask` returns labelled candidates."
        ),
        max_message_mb: float = typer.Option(
            8.0, "--max-message-mb", min=0.01, help="Largest MCP message accepted (MiB)."
        ),
    ) -> None:
        """Serve kgreason's tools over MCP (stdio). Configure it in an MCP client."""
        try:  # the mcp SDK comes with the [server] extra
            from kgreason.server.mcp_stdio import claim_stdio
            from kgreason.server.service import Service, ServiceError
        except ImportError as e:
            fail(f"`kgreason mcp` needs the server extra (pip install 'kgreason[server]'): {e}")

        loaded = settings(ctx)
        with claim_stdio() as wire:  # from here on, stray output goes to stderr
            try:
                service = Service.from_settings(loaded.settings, kg=kg, llm_free=llm_free or None)
            except ServiceError as e:
                fail(f"{e.kind}: {e.message}")
            except Exception as e:  # a KG, embedder or LLM that will not load
                fail(f"{_part(e)}: {e}")
            from kgreason.heap import freeze_warm_state, warm_kernels

            warm_kernels(service.kg)  # a large local KG: PoG's kernels compiled now
            freeze_warm_state()  # the loaded service is permanent (kgreason.heap)
            try:
                asyncio.run(_serve(service, wire, int(max_message_mb * 1024 * 1024)))
            except KeyboardInterrupt:
                raise typer.Exit(130) from None
