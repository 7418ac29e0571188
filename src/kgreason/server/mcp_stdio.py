"""The stdio transport for `kgreason mcp`, with a bound on the size of one message.

The SDK's stdio transport reads each JSON-RPC line whole, however long: a client (or
whatever feeds the pipe) could make the server hold gigabytes. Here a line over
`max_bytes` is skipped as it streams in (never held in memory) and answered with a JSON-RPC
error naming the limit, for the request id found at the start of the line; the server then
reads the next message as usual. Messages under the limit still meet the tools' own,
much smaller, argument limits.

As the SDK does, fd 0 is moved aside while serving (children read EOF, never protocol
bytes); fd 1 is the SDK's to guard (it points it at stderr, so stray prints miss the wire).
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import AsyncIterator, Callable
from typing import Any, BinaryIO

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

#: default bound on one message (bytes); the largest tool argument is far below it
MAX_MESSAGE_BYTES = 8 * 1024 * 1024
#: how far into an oversize line the request id is looked for
_ID_WINDOW = 4096
_CHUNK = 1 << 16
_ID = re.compile(rb'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.){0,200}")')


def request_id(prefix: bytes) -> int | str | None:
    """The JSON-RPC id near the start of a message (the SDK writes it before the params)."""
    m = _ID.search(prefix)
    if m is None:
        return None
    raw = m.group(1)
    if raw.startswith(b'"'):
        try:
            return str(raw[1:-1].decode("utf-8"))
        except UnicodeDecodeError:
            return None
    return int(raw)


class BoundedLines:
    """Async iterator of the lines on a binary stream, each at most `max_bytes`; a longer
    line is drained without being kept, and `on_oversize(id, size)` is awaited for it."""

    def __init__(self, stream: BinaryIO, max_bytes: int) -> None:
        self.stream = stream
        self.max_bytes = max_bytes
        self.on_oversize: Callable[[int | str | None, int], Any] | None = None

    async def _read(self, limit: int) -> bytes:
        return await anyio.to_thread.run_sync(self.stream.readline, limit, abandon_on_cancel=True)

    async def __aiter__(self) -> AsyncIterator[str]:
        while True:
            line = await self._read(self.max_bytes + 1)
            if not line:
                return
            if line.endswith(b"\n") or len(line) <= self.max_bytes:  # newline not counted
                yield line.decode("utf-8", errors="replace")
                continue
            size, prefix = len(line), line[:_ID_WINDOW]
            while not line.endswith(b"\n"):  # drain the rest of this line, chunk by chunk
                line = await self._read(_CHUNK)
                if not line:
                    break
                size += len(line)
            if self.on_oversize is not None:
                await self.on_oversize(request_id(prefix), size)


@contextlib.contextmanager
def _claim_stdin() -> Any:
    """A private duplicate of fd 0 for the protocol; fd 0 itself reads /dev/null meanwhile."""
    private = os.dup(0)
    os.set_inheritable(private, False)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
    finally:
        os.close(null)
    try:
        with os.fdopen(private, "rb", buffering=_CHUNK, closefd=False) as stream:
            yield stream
    finally:
        os.dup2(private, 0)
        os.close(private)


async def serve_stdio(server: MCPServer, *, max_message_bytes: int = MAX_MESSAGE_BYTES) -> None:
    """Serve `server` on stdin/stdout until the client closes stdin."""
    with _claim_stdin() as stream:
        lines = BoundedLines(stream, max_message_bytes)
        async with stdio_server(stdin=lines) as (read_stream, write_stream):  # type: ignore[arg-type]

            async def refuse(rid: int | str | None, size: int) -> None:
                error = types.ErrorData(
                    code=types.INVALID_REQUEST,
                    message=f"message of {size} bytes refused: the limit is {max_message_bytes} "
                    "bytes per message",
                )
                reply = types.JSONRPCError(jsonrpc="2.0", id=rid, error=error)
                await write_stream.send(SessionMessage(reply))

            lines.on_oversize = refuse
            # The SDK has no public way to serve an MCPServer on given streams; its own
            # Client reaches the low-level server the same way.
            low = server._lowlevel_server
            await low.run(read_stream, write_stream, low.create_initialization_options())
