"""The one error type of the server's operations (HTTP maps it to a status, MCP to a tool
error)."""

from __future__ import annotations


class ServiceError(Exception):
    """A failed operation: `kind` (machine-readable), message, and the HTTP status it maps
    to (404 unknown entity, 400/422 bad input, 429 busy, 504 deadline)."""

    def __init__(self, kind: str, message: str, status: int, *, retry_after: int | None = None):
        super().__init__(message)
        self.kind, self.message, self.status = kind, message, status
        self.retry_after = retry_after

    def to_dict(self) -> dict[str, str]:
        return {"error_kind": self.kind, "message": self.message}
