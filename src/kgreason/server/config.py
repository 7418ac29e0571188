"""How `kgreason serve` runs: the address, the token and the limits (CLI flags fill it)."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from pathlib import Path

#: 1 MiB: a question is a few hundred bytes; a solve context or program a few dozen KB
DEFAULT_MAX_BODY = 1 << 20


@dataclass(frozen=True)
class ServerConfig:
    host: str = "127.0.0.1"
    port: int = 8000
    #: bearer token every /v1 and /metrics request must carry (None: no check, local only)
    token: str | None = None
    #: largest request body accepted, in bytes (413 above)
    max_body: int = DEFAULT_MAX_BODY
    #: directory whose eval runs /v1/runs lists (None: the endpoint says none is set)
    runs_dir: Path | None = None
    #: seconds uvicorn waits for in-flight requests at shutdown before cutting them
    shutdown_grace_s: float = 90.0
    #: seconds a connection may take to send a request's head (request line and headers);
    #: a slower or silent client is disconnected (slowloris)
    header_timeout_s: float = 20.0
    #: seconds a request's whole body may take to arrive once its head is in (408 after)
    body_timeout_s: float = 60.0


class UnsafeBind(ValueError):
    """A non-loopback address without a token."""


def is_loopback(host: str) -> bool:
    """127.0.0.0/8, ::1 and `localhost`; anything else (0.0.0.0, a LAN address, a name that
    might resolve anywhere) counts as exposed."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, token: str | None) -> None:
    if not is_loopback(host) and not token:
        raise UnsafeBind(
            f"refusing to listen on {host} without a token: anyone who can reach it could "
            "run questions; pass --token (or KGREASON_SERVER__TOKEN), or bind 127.0.0.1"
        )
