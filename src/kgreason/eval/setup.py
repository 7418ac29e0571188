"""Builds what a run needs from settings: the run configuration record and the method."""

from __future__ import annotations

import platform
from datetime import UTC, datetime
from typing import Any

from kgreason import __version__
from kgreason.config import Settings, flatten_keys
from kgreason.eval.methods import prompt_hashes
from kgreason.eval.rundir import git_revision

METHODS = ("pog", "pog-e", "llm-free", "io", "cot", "sc", "symbollkg", "tog", "tog-r")
SECRET = ("llm.api_key",)


def run_config(
    settings: Settings,
    *,
    dataset: str,
    split: str | None,
    hops: int | None,
    limit: int | None,
    method: str,
    model: str | None,
    kg: dict[str, str] | None,
    extra_prompt_hashes: dict[str, str] | None = None,
) -> dict[str, Any]:
    flat = flatten_keys(settings.model_dump(mode="json"))
    for k in SECRET:
        if flat.get(k):
            flat[k] = "***"
    return {
        "dataset": dataset,
        "split": split,
        "hops": hops,
        "limit": limit,
        "method": method,
        "model": model,
        "kg": kg,
        "settings": flat,
        "prompt_hashes": {**prompt_hashes(), **(extra_prompt_hashes or {})},
        "version": __version__,
        "git_revision": git_revision(),
        "python": platform.python_version(),
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
    }
