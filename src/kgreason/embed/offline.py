"""Keep Hugging Face libraries off the network while a model is loaded.

`huggingface_hub` reads HF_HUB_OFFLINE once, at import, into a module constant, so setting
the environment variable alone is not enough once it has been imported: the constant is
flipped too, and both are restored on exit so the caller's process is left as it was.
The loaders also pass `local_files_only=True`; this is the second fence.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

_ENV_VARS = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE")


@contextmanager
def hub_offline() -> Iterator[None]:
    """Within the block no Hugging Face library may reach the Hub."""
    saved_env = {name: os.environ.get(name) for name in _ENV_VARS}
    constants = sys.modules.get("huggingface_hub.constants")
    saved_const = getattr(constants, "HF_HUB_OFFLINE", None) if constants else None
    try:
        for name in _ENV_VARS:
            os.environ[name] = "1"
        if constants is not None:
            constants.HF_HUB_OFFLINE = True  # type: ignore[attr-defined]
        yield
    finally:
        for name, value in saved_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        # Imported inside the block: it read the offline env var; put back the outer value.
        constants = sys.modules.get("huggingface_hub.constants")
        if constants is not None:
            if saved_const is None:
                raw = saved_env["HF_HUB_OFFLINE"] or saved_env["TRANSFORMERS_OFFLINE"] or ""
                saved_const = raw.strip().upper() in {"1", "ON", "YES", "TRUE"}
            constants.HF_HUB_OFFLINE = saved_const  # type: ignore[attr-defined]
