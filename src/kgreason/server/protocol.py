"""uvicorn's h11 protocol with a deadline on the request head.

uvicorn times out idle keep-alive connections only after a response, and any byte received
re-arms nothing: a client that connects and sends nothing, or trickles a header line every
few seconds without ever ending the head (slowloris), holds a connection (and a file
descriptor) forever. Here each connection must complete a request head within
`head_timeout_s` of its first byte being awaited, or it is closed. The body has its own
deadline (BodyLimitMiddleware, a 408); a request being answered is never cut by this one."""

from __future__ import annotations

import asyncio

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol


class HeadTimeoutH11(H11Protocol):
    #: seconds to receive a whole request head (set by `with_head_timeout`)
    head_timeout_s: float = 20.0
    _head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is h11.IDLE:
            self._arm()  # a head begun, not finished: the deadline keeps running (not reset)
        else:
            self._disarm()  # head complete: the request is the app's now

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        # keep-alive: uvicorn's own idle timer runs until the next byte, then ours does
        self._disarm()

    def _arm(self) -> None:
        if self._head_timer is None:
            self._head_timer = self.loop.call_later(self.head_timeout_s, self._head_timed_out)

    def _disarm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()


def with_head_timeout(seconds: float) -> type[HeadTimeoutH11]:
    """The protocol class for `uvicorn.Config(http=...)` with this head deadline."""
    return type("HeadTimeoutH11", (HeadTimeoutH11,), {"head_timeout_s": seconds})
