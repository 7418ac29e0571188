"""The stdio transport for `kgreason mcp`, with a bound on the size of one message.

The SDK's stdio transport reads each JSON-RPC line whole, however long: a client (or
whatever feeds the pipe) could make the server hold gigabytes. Here a line over
`max_bytes` is skipped as it streams in (never held in memory) and answered with a JSON-RPC
error naming the limit, for the request id found at the start of the line; the server then
reads the next message as usual. Messages under the limit still meet the tools' own,
much smaller, argument limits. A line that is not a JSON-RPC message (not JSON, nested past
the parser's depth limit, no method) is answered with a parse or invalid-request error too,
where the SDK would drop it and leave the client waiting on that request.

As the SDK does for its own transport, fds 0 and 1 are moved aside (`claim_stdio`): the
protocol uses private duplicates, fd 0 reads /dev/null and fd 1 writes to stderr. Here the
claim starts before the models load, so nothing printed while loading reaches the client.
POSIX only (fcntl), as is the rest of kgreason's process handling.
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import os
import re
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import BinaryIO

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

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


#: how a refused line is answered: (request id or None, JSON-RPC error code, message)
Refuse = Callable[[int | str | None, int, str], Awaitable[None]]


def check_message(text: str) -> tuple[int, str] | None:
    """None for a well-formed JSON-RPC message, else the (code, reason) to answer with.
    The SDK would drop such a line with no reply, leaving the client waiting for its id."""
    try:
        types.jsonrpc_message_adapter.validate_json(text, by_name=False)
    except ValidationError as e:
        errors = e.errors(include_url=False, include_context=False, include_input=False)
        first = errors[0] if errors else {"type": "", "msg": str(e)}
        code = types.PARSE_ERROR if first["type"] == "json_invalid" else types.INVALID_REQUEST
        kind = "not JSON" if code == types.PARSE_ERROR else "not a JSON-RPC message"
        return code, f"{kind}: {first['msg']}"
    return None


class BoundedLines:
    """Async iterator of the JSON-RPC lines on a binary stream, each at most `max_bytes`.
    A longer line is drained without being kept, and a line that is not a JSON-RPC message
    is dropped; for both, `refuse(id, code, message)` is awaited, the id taken from the
    start of the line."""

    def __init__(self, stream: BinaryIO, max_bytes: int) -> None:
        self.stream = stream
        self.max_bytes = max_bytes
        self.refuse: Refuse | None = None

    async def _read(self, limit: int) -> bytes:
        return await anyio.to_thread.run_sync(self.stream.readline, limit, abandon_on_cancel=True)

    async def _refused(self, prefix: bytes, code: int, message: str) -> None:
        if self.refuse is not None:
            await self.refuse(request_id(prefix[:_ID_WINDOW]), code, message)

    async def __aiter__(self) -> AsyncIterator[str]:
        while True:
            line = await self._read(self.max_bytes + 1)
            if not line:
                return
            if not (line.endswith(b"\n") or len(line) <= self.max_bytes):  # "\n" not counted
                size, prefix = len(line), line[:_ID_WINDOW]
                while not line.endswith(b"\n"):  # drain the rest of this line, chunk by chunk
                    line = await self._read(_CHUNK)
                    if not line:
                        break
                    size += len(line)
                limit = f"the limit is {self.max_bytes} bytes per message"
                await self._refused(
                    prefix, types.INVALID_REQUEST, f"message of {size} bytes refused: {limit}"
                )
                continue
            if not line.strip():
                continue
            text = line.decode("utf-8", errors="replace")
            problem = check_message(text)
            if problem is not None:
                await self._refused(line, *problem)
                continue
            yield text


def _private_dup(fd: int) -> int:
    """A non-inheritable duplicate of `fd` above the standard range."""
    return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)


@contextlib.contextmanager
def claim_stdio() -> Iterator[tuple[BinaryIO, BinaryIO]]:
    """The protocol's own duplicates of fds 0 and 1, as binary streams. Until the block
    ends, fd 0 reads /dev/null and fd 1 writes to stderr, so nothing else in the process
    (a print while the models load, C code, a solver child) can read protocol bytes or
    write into the protocol stream. Both are restored on exit."""
    sys.stdout.flush()
    wire_in, wire_out = _private_dup(0), _private_dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    try:
        os.dup2(null, 0)
        try:
            os.dup2(2, 1)
        except OSError:  # no stderr: stray output is dropped
            os.dup2(null, 1)
    finally:
        os.close(null)
    try:
        with (
            os.fdopen(wire_in, "rb", buffering=_CHUNK, closefd=False) as stdin,
            os.fdopen(wire_out, "wb", closefd=False) as stdout,
        ):
            yield stdin, stdout
    finally:
        sys.stdout.flush()
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)
        os.close(wire_in)
        os.close(wire_out)


async def serve_stdio(
    server: MCPServer,
    stdin: BinaryIO,
    stdout: BinaryIO,
    *,
    max_message_bytes: int = MAX_MESSAGE_BYTES,
) -> None:
    """Serve `server` on the given protocol streams (from `claim_stdio`) until the client
    closes its end."""
    lines = BoundedLines(stdin, max_message_bytes)
    writer = anyio.wrap_file(io.TextIOWrapper(stdout, encoding="utf-8", write_through=True))
    async with stdio_server(stdin=lines, stdout=writer) as (read_stream, write_stream):  # type: ignore[arg-type]

        async def refuse(rid: int | str | None, code: int, message: str) -> None:
            error = types.ErrorData(code=code, message=message)
            reply = types.JSONRPCError(jsonrpc="2.0", id=rid, error=error)
            await write_stream.send(SessionMessage(reply))

        lines.refuse = refuse
        # The SDK has no public way to serve an MCPServer on given streams; its own
        # Client reaches the low-level server the same way.
        low = server._lowlevel_server
        await low.run(read_stream, write_stream, low.create_initialization_options())
