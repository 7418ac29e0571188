"""The KG that ships with kgreason (MetaQA's movie KB, see metaqa/PROVENANCE.md).

The vendored file is built into a store on first use, in the user's cache directory
(KGREASON_CACHE_DIR, else $XDG_CACHE_HOME/kgreason, else ~/.cache/kgreason), keyed by the
file's hash and the store format version. A lock file serialises concurrent first uses and the build itself is an atomic
rename, so a reader never sees a half-built store.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
from collections.abc import Mapping
from importlib import resources
from pathlib import Path

from kgreason.kg.loaders import Source
from kgreason.kg.store import build_store
from kgreason.kg.store.format import FORMAT_VERSION, MANIFEST

BUNDLED_FILE = "metaqa/kb.txt.gz"


def bundled_kb_file() -> Path:
    return Path(str(resources.files(__package__).joinpath(BUNDLED_FILE)))


def cache_dir(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    if env.get("KGREASON_CACHE_DIR"):
        return Path(env["KGREASON_CACHE_DIR"])
    base = env.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kgreason"


def bundled_store_target(env: Mapping[str, str] | None = None) -> Path:
    """Where the bundled KG's store is (or will be) built: keyed by the bundled file's digest
    and the store format, so a cache built by an older kgreason is never opened (it would
    be refused), a new one is built beside it."""
    digest = hashlib.sha256(bundled_kb_file().read_bytes()).hexdigest()[:16]
    return cache_dir(env) / "stores" / f"metaqa-{digest}-v{FORMAT_VERSION}"


def bundled_store_built(env: Mapping[str, str] | None = None) -> bool:
    """Whether the bundled KG's store is built (without building it: `kgreason doctor`)."""
    return (bundled_store_target(env) / MANIFEST).is_file()


def bundled_store_path(env: Mapping[str, str] | None = None) -> Path:
    """The bundled KG's store directory, built now if it is not there yet."""
    kb = bundled_kb_file()
    out = bundled_store_target(env)
    root = out.parent
    if (out / MANIFEST).is_file():
        return out
    root.mkdir(parents=True, exist_ok=True)
    with open(root / f"{out.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not (out / MANIFEST).is_file():  # another process may have built it meanwhile
                build_store([Source(kb, "metaqa")], out, force=True)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return out
