"""Warm state out of the cyclic garbage collector's reach, for processes that answer many
questions after loading (`kgreason serve`, `kgreason mcp`; bench/pog_scale.py does the same
by hand, so that it can also run older checkouts).

Why (issue 15): a full collection walks every tracked object. After importing kgreason and
opening a KG that is ~50k objects, 20-30 ms on the bench machine, and the allocations of a
large question's path search trigger one inside the paths stage (43-61 ms measured in four
10M questions). `gc.freeze()` moves the objects alive now to a permanent generation, so
later collections walk only what was allocated since. Frozen objects are never collected,
which is what warm state (the KG, the embedder, imported modules) is for anyway.

This is called by entry points only, never by library code: freezing is the application's
decision.
"""

from __future__ import annotations

import gc


def freeze_warm_state() -> int:
    """Collect what loading left behind, then freeze the rest; returns the number of
    objects frozen."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
