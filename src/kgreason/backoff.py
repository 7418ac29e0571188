"""One backoff policy for every client that retries (the LLM adapter, the SPARQL client).

Capped exponential backoff with jitter, configured per client. The two clients use two
jitter shapes on purpose:

- `full` (LLM APIs): a uniform draw in [0, min(cap, base * 2**n)]. Many concurrent callers
  share one rate limit, so spreading them apart after a shared outage matters most (AWS
  Architecture Blog, "Exponential Backoff and Jitter"); the server's Retry-After hint, when
  given, is a floor, still capped.
- `added` (SPARQL endpoints): min(cap, base * 2**n) plus a uniform draw in [0, base]. One
  process usually talks to a self-hosted endpoint that failed because it is restarting or
  overloaded; every pause must be at least the exponential step, so the endpoint gets
  growing rest, and the small jitter only decorrelates parallel queries.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Literal

Jitter = Literal["full", "added"]


@dataclass
class Backoff:
    max_retries: int = 3
    base_s: float = 0.5
    cap_s: float = 10.0
    jitter: Jitter = "added"
    rng: random.Random = field(default_factory=random.Random)

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError("max_retries must be at least 0")

    @property
    def attempts(self) -> int:
        return self.max_retries + 1

    def delay(self, retry: int, hint: float | None = None) -> float:
        """Pause before retry number `retry` (0-based); `hint` is a server's Retry-After."""
        step = min(self.cap_s, self.base_s * 2.0**retry)
        if self.jitter == "added":
            return step + self.rng.uniform(0.0, self.base_s)
        d = self.rng.uniform(0.0, step)
        if hint is not None:
            d = max(d, hint)
        return min(d, self.cap_s)
