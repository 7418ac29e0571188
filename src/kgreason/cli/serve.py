"""`kgreason serve`: the HTTP API (and the web explorer) over warm models. Everything loads
once at start; 127.0.0.1 unless a token is set; see docs/server.md."""

from __future__ import annotations

from pathlib import Path

import typer

from kgreason.cli.common import err_console, fail, settings, verbosity
from kgreason.cli.embedder_option import EmbedderOption, embedder_override

TOKEN_ENV = "KGREASON_SERVER__TOKEN"


def register(app: typer.Typer) -> None:
    @app.command("serve")
    def serve_command(
        ctx: typer.Context,
        kg: str | None = typer.Option(
            None, "--kg", help="KG store directory (default: the bundled MetaQA KG)."
        ),
        sparql: str | None = typer.Option(None, "--sparql", help="SPARQL endpoint URL."),
        dialect: str | None = typer.Option(None, help="freebase | wikidata | generic"),
        host: str = typer.Option("127.0.0.1", "--host", help="Address to bind."),
        port: int = typer.Option(8000, "--port", min=0, max=65535, help="Port (0: any free)."),
        token: str | None = typer.Option(
            None,
            "--token",
            envvar=TOKEN_ENV,
            show_envvar=True,
            help="Bearer token the API requires (needed for a non-local --host).",
        ),
        max_concurrency: int = typer.Option(
            4, "--max-concurrency", min=1, help="Questions at once; more get 429 + Retry-After."
        ),
        deadline: float = typer.Option(
            120.0, "--deadline", min=0.1, help="Seconds per question before 504."
        ),
        max_body: int = typer.Option(
            1 << 20, "--max-body", min=1024, help="Largest request body in bytes (413 above)."
        ),
        runs_dir: Path | None = typer.Option(
            None, "--runs-dir", help="Eval runs directory /v1/runs lists (read-only)."
        ),
        llm_free: bool = typer.Option(
            False, "--llm-free", help="Never use an LLM for questions, even if configured."
        ),
        workers: int = typer.Option(
            1,
            "--workers",
            min=1,
            max=64,
            help="Processes answering on the one port, each with its own models (see"
            " docs/server.md); limits are per process.",
        ),
        embedder: EmbedderOption = None,
    ) -> None:
        """Serve the HTTP API, /docs and the web explorer with the models loaded once."""
        from kgreason.server.config import ServerConfig, UnsafeBind, check_bind

        try:
            check_bind(host, token)
        except UnsafeBind as e:
            fail(str(e), code=2)
        if runs_dir is not None and not runs_dir.is_dir():
            fail(f"--runs-dir {runs_dir}: not a directory", code=2)
        overrides = {"kg.store": kg, "kg.sparql_url": sparql, "kg.dialect": dialect}
        s = settings(ctx, **overrides, **embedder_override(embedder)).settings
        cfg = ServerConfig(
            host=host, port=port, token=token or None, max_body=max_body,
            runs_dir=runs_dir.resolve() if runs_dir else None,
            shutdown_grace_s=deadline + 5,
        )  # fmt: skip
        from kgreason.server.run import serve
        from kgreason.server.service import Limits

        err = err_console()
        log_level = "info" if verbosity() else "warning"

        def say(text: str) -> None:
            err.print(f"kgreason serve: {text}", highlight=False, markup=False, soft_wrap=True)

        def start(worker: int | None, announce, sockets=None) -> None:  # type: ignore[no-untyped-def]
            service = _build(s, llm_free)
            service.limits = Limits(max_concurrency=max_concurrency, deadline_s=deadline)
            service.worker = worker
            if not worker:  # one line, from the first worker
                mode = service.llm_free_label if service.llm_free else "PoG"
                auth = "token required" if token else "no token: local only"
                say(f"{mode}; KG {service.info()['kg']}; {auth}")
            serve(service, cfg, log_level=log_level, announce=announce, sockets=sockets)

        if workers > 1:
            _supervise(host, port, workers, start, say)
            return
        try:
            start(None, lambda url: say(f"listening on {url}"))
        except SystemExit as e:  # uvicorn exits 3 when it cannot bind; its log says why
            if e.code not in (None, 0):
                fail(f"cannot listen on {host}:{port} (see the line above)", code=1)
            raise


def _supervise(host: str, port: int, n: int, start, say) -> None:  # type: ignore[no-untyped-def]
    """`--workers n`: bind here, fork n workers that each load and serve (server/workers.py)."""
    import os

    from kgreason.server.workers import Supervisor, bind

    if not hasattr(os, "fork"):
        fail("--workers needs os.fork (Linux or macOS); run one server per port here", code=2)
    try:
        sock = bind(host, port)
    except OSError as e:
        fail(f"cannot listen on {host}:{port}: {e.strerror or e}", code=1)

    def worker(index: int, sock, ready) -> int:  # type: ignore[no-untyped-def]
        try:
            start(index, lambda url: ready(), [sock])
        except typer.Exit as e:  # fail(): its message is printed already
            return int(e.exit_code)
        return 0

    code = Supervisor(sock, n, worker, say).run()
    sock.close()
    if code:
        fail(f"stopped: a worker failed (see above); {n} workers were asked for", code=code)


def _build(s, llm_free: bool):  # type: ignore[no-untyped-def]
    import kgreason
    from kgreason.server.service import Service

    try:
        return Service.from_settings(s, llm_free=True if llm_free else None)
    except (kgreason.KGError, kgreason.EmbedderError, kgreason.LLMError, ValueError) as e:
        fail(f"cannot start: {type(e).__name__}: {e}")
