"""uvicorn's h11 protocol with a deadline on the request head.

uvicorn times out idle keep-alive connections only after a response, and any byte received
re-arms nothing: a client that connects and sends nothing, or trickles a header line every
few seconds without ever ending the head (slowloris), holds a connection (and a file
descriptor) forever. Here each connection must complete a request head within
`head_timeout_s` of its first byte being awaited, or it is closed. The body has its own
deadline (BodyLimitMiddleware, a 408); a request being answered is never cut by this one.

The head's size is capped here too (`head_max_bytes`, 431 above it). h11's own
`max_incomplete_event_size` applies only while a head is incomplete, so a head that arrives
whole in one read (asyncio reads up to 256 KiB at a time) was accepted at any size."""

from __future__ import annotations

import asyncio
import json
import re

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

#: the blank line that ends a request head (h11 also takes bare newlines)
_HEAD_END = re.compile(rb"\r?\n\r?\n")


class HeadTimeoutH11(H11Protocol):
    #: seconds to receive a whole request head (set by `with_head_timeout`)
    head_timeout_s: float = 20.0
    #: the longest request head (request line and headers) accepted, in bytes
    head_max_bytes: int = 64 * 1024
    _head_timer: asyncio.TimerHandle | None = None
    _head_seen: int = 0
    _head_tail: bytes = b""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self.conn.their_state is h11.IDLE and self._head_too_long(data):
            self._refuse_head()
            return
        super().data_received(data)
        if self.conn.their_state is h11.IDLE:
            self._arm()  # a head begun, not finished: the deadline keeps running (not reset)
        else:
            self._disarm()  # head complete: the request is the app's now
            self._head_done()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        # keep-alive: uvicorn's own idle timer runs until the next byte, then ours does
        self._disarm()
        self._head_done()

    def _arm(self) -> None:
        if self._head_timer is None:
            self._head_timer = self.loop.call_later(self.head_timeout_s, self._head_timed_out)

    def _disarm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_too_long(self, data: bytes) -> bool:
        """The head begun so far plus `data` (up to the head's end, if it is in `data`) is
        over the cap. Counted here, not from h11's buffer (reading that copies it: a head
        trickled a byte at a time would cost quadratic time); the search is linear."""
        window = self._head_tail + data[: self.head_max_bytes + 4]
        end = _HEAD_END.search(window)
        if end is not None:
            return self._head_seen + end.end() - len(self._head_tail) > self.head_max_bytes
        self._head_seen += len(data)
        self._head_tail = window[-3:]
        return self._head_seen > self.head_max_bytes

    def _head_done(self) -> None:
        self._head_seen, self._head_tail = 0, b""

    def _refuse_head(self) -> None:
        body = json.dumps(
            {
                "error_kind": "head-too-large",
                "message": f"the request line and headers are over {self.head_max_bytes} bytes",
            }
        ).encode()
        head = (
            "HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: application/json"
            f"\r\ncontent-length: {len(body)}\r\nconnection: close\r\n\r\n"
        )
        self._disarm()
        self.transport.write(head.encode() + body)
        self.transport.close()

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()


def with_head_timeout(seconds: float, max_bytes: int = 64 * 1024) -> type[HeadTimeoutH11]:
    """The protocol class for `uvicorn.Config(http=...)` with this head deadline and cap."""
    attrs = {"head_timeout_s": seconds, "head_max_bytes": max_bytes}
    return type("HeadTimeoutH11", (HeadTimeoutH11,), attrs)
