"""Paths of the test data: the vendored slices here, and the full shared datasets.

Import these instead of building `../shared/data` paths by hand, so a bare clone works:
`SMALL_DATA` is always present; `shared_data_dir()` is None when the full data is not.
"""

from __future__ import annotations

import os
from pathlib import Path

SMALL_DATA = Path(__file__).resolve().parent
REPO = SMALL_DATA.parents[1]
ENV = "KGREASON_SHARED_DATA"
SKIP_REASON = "needs the shared data: set KGREASON_SHARED_DATA (see tests/data/README.md)"


def shared_data_dir() -> Path | None:
    """`$KGREASON_SHARED_DATA` if set (None when it is not a directory), else
    `<repo>/../shared/data` when it exists, else None."""
    env = os.environ.get(ENV)
    if env:
        path = Path(env).expanduser()
        return path.resolve() if path.is_dir() else None
    beside = REPO.parent / "shared" / "data"
    return beside if beside.is_dir() else None
