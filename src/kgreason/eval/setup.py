"""Builds what a run needs from settings: the run configuration record and the method."""

from __future__ import annotations

import platform
from datetime import UTC, datetime
from typing import Any

from kgreason import __version__
from kgreason.config import Settings, flatten_keys
from kgreason.eval.rundir import git_revision

METHODS = ("pog", "pog-e", "llm-free", "io", "cot", "sc", "symbollkg", "tog", "tog-r")
SECRET = ("llm.api_key",)


def run_config(
    settings: Settings,
    *,
    dataset: str,
    split: str | None,
    hops: int | list[int] | None,
    limit: int | None,
    method: str,
    model: str | None,
    kg: dict[str, str] | None,
    extra_prompt_hashes: dict[str, str] | None = None,
    defaulted: list[str] | None = None,
) -> dict[str, Any]:
    """What `config.json` records. `extra_prompt_hashes` are the prompt and schema files of
    the method run (`BuiltMethod.prompt_hashes`): only those, so that `--resume` refuses a
    run whose own prompts changed but not one whose unrelated prompts did. `split` and
    `hops` are what ran; `defaulted` names those the user did not choose."""
    flat = flatten_keys(settings.model_dump(mode="json"))
    for k in SECRET:
        if flat.get(k):
            flat[k] = "***"
    return {
        "dataset": dataset,
        "split": split,
        "hops": hops,
        "defaulted": list(defaulted or []),
        "limit": limit,
        "method": method,
        "model": model,
        "kg": kg,
        "settings": flat,
        "prompt_hashes": dict(extra_prompt_hashes or {}),
        "version": __version__,
        "git_revision": git_revision(),
        "python": platform.python_version(),
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
    }
