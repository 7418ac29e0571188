"""Typed settings with layered sources and provenance.

Precedence, lowest first: built-in defaults (the papers' values), a `kgreason.toml`
(or the file named by KGREASON_CONFIG / --config), `KGREASON_*` environment variables
(nested with `__`, e.g. KGREASON_POG__W1=40), the standard OPENAI_API_KEY / OPENAI_BASE_URL /
OPENAI_MODEL for the LLM section, then command-line flags. `load_settings` records where
every value came from so `kgreason config` can show it, and turns validation failures into
one-line errors naming the key and its source.
"""

from __future__ import annotations

import contextlib
import json
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from kgreason.embed.settings import EmbedSettings
from kgreason.kg.settings import KGSettings
from kgreason.lkg.settings import LKGSettings
from kgreason.llm.settings import LLMSettings
from kgreason.pog.settings import PoGSettings
from kgreason.tog.settings import ToGSettings

ENV_PREFIX = "KGREASON_"
#: KGREASON_* variables that are not settings: the config file, the cache and data folders.
RESERVED_ENV = {
    "KGREASON_CONFIG",
    "KGREASON_CACHE_DIR",
    "KGREASON_DATA_DIR",
    "KGREASON_SHARED_DATA",  # the tests' full datasets (tests/data/__init__.py)
    "KGREASON_OTEL",  # switches the OpenTelemetry exporter on (kgreason.otel)
    "KGREASON_JIT",  # PoG's compiled graph kernels: 0 off, 1 at any size (kgreason.jit)
    "KGREASON_JIT_THREADS",  # threads the kernels may split a large step over (same module)
    "KGREASON_SERVER__TOKEN",  # `kgreason serve --token` (kept out of settings and dumps)
}
DEFAULT_CONFIG_FILE = "kgreason.toml"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(extra="forbid", env_prefix=ENV_PREFIX)

    llm: LLMSettings = LLMSettings()
    embed: EmbedSettings = EmbedSettings()
    kg: KGSettings = KGSettings()
    pog: PoGSettings = PoGSettings()
    lkg: LKGSettings = LKGSettings()
    tog: ToGSettings = ToGSettings()

    @classmethod
    def settings_customise_sources(cls, settings_cls, init_settings, *args, **kwargs):
        # Layers are merged by `load_settings`, which tracks provenance; only init is used here.
        return (init_settings,)


class ConfigError(ValueError):
    """A bad setting; the message is one line naming the key and where it came from."""


@dataclass
class LoadedSettings:
    settings: Settings
    #: dotted key -> "default" | "file:PATH" | "env:NAME" | "cli"
    origins: dict[str, str] = field(default_factory=dict)


def flatten_keys(d: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested settings as dotted keys (`{"llm": {"model": m}}` -> `{"llm.model": m}`): the form
    `kgreason config`, env variables and eval run records name settings by."""
    out: dict[str, Any] = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out.update(flatten_keys(v, key + "."))
        else:
            out[key] = v
    return out


def _set(d: dict[str, Any], dotted: str, value: Any) -> None:
    parts = dotted.split(".")
    for p in parts[:-1]:
        d = d.setdefault(p, {})
        if not isinstance(d, dict):
            raise ConfigError(f"setting '{dotted}': '{p}' is not a section")
    d[parts[-1]] = value


def _env_layer(environ: Mapping[str, str]) -> dict[str, tuple[Any, str]]:
    layer: dict[str, tuple[Any, str]] = {}
    for std, key in (
        ("OPENAI_API_KEY", "llm.api_key"),
        ("OPENAI_BASE_URL", "llm.base_url"),
        ("OPENAI_MODEL", "llm.model"),
    ):
        if environ.get(std):
            layer[key] = (environ[std], f"env:{std}")
    for name, value in environ.items():
        if not name.startswith(ENV_PREFIX) or name in RESERVED_ENV:
            continue
        dotted = name[len(ENV_PREFIX) :].lower().replace("__", ".")
        if value.startswith(("[", "{")):
            with contextlib.suppress(json.JSONDecodeError):
                value = json.loads(value)
        layer[dotted] = (value, f"env:{name}")
    return layer


def _known_keys() -> set[str]:
    return set(flatten_keys(Settings().model_dump()).keys())


def load_settings(
    config_file: str | Path | None = None,
    cli: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
) -> LoadedSettings:
    """Merge defaults, file, environment and CLI flags; raise ConfigError on a bad value."""
    environ = os.environ if environ is None else environ
    merged: dict[str, Any] = {}
    origins: dict[str, str] = dict.fromkeys(_known_keys(), "default")
    known = set(origins)

    path = config_file or environ.get(ENV_PREFIX + "CONFIG")
    if path is None and Path(DEFAULT_CONFIG_FILE).is_file():
        path = DEFAULT_CONFIG_FILE
    if path is not None:
        p = Path(path)
        if not p.is_file():
            raise ConfigError(f"config file {p} does not exist")
        try:
            data = tomllib.loads(p.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(f"{p}: not valid TOML: {e}") from e
        for key, value in flatten_keys(data).items():
            if key not in known and not any(k.startswith(key + ".") for k in known):
                raise ConfigError(f"unknown setting '{key}' in {p}")
            _set(merged, key, value)
            origins[key] = f"file:{p}"

    for key, (value, origin) in _env_layer(environ).items():
        if key not in known:
            raise ConfigError(f"unknown setting '{key}' from {origin.removeprefix('env:')}")
        _set(merged, key, value)
        origins[key] = origin

    for key, value in (cli or {}).items():
        if value is None:
            continue
        if key not in known:
            raise ConfigError(f"unknown setting '{key}' from the command line")
        _set(merged, key, value)
        origins[key] = "cli"

    try:
        settings = Settings(**merged)
    except ValidationError as e:
        err = e.errors()[0]
        key = ".".join(str(x) for x in err["loc"])
        origin = origins.get(key, "default")
        where = {"default": "the defaults", "cli": "the command line"}.get(origin, origin)
        where = where.replace("file:", "").replace("env:", "environment variable ")
        raise ConfigError(f"setting '{key}' from {where}: {err['msg']}") from None
    _check_paths(settings, origins)
    return LoadedSettings(settings, origins)


def _check_paths(settings: Settings, origins: dict[str, str]) -> None:
    model = settings.embed.model
    if model and (model.startswith((".", "/", "~")) and not Path(model).expanduser().exists()):
        raise ConfigError(
            f"setting 'embed.model' from {origins.get('embed.model', 'default')}: "
            f"model path {model} does not exist"
        )
    store = settings.kg.store
    if store is not None and not Path(store).exists():
        raise ConfigError(
            f"setting 'kg.store' from {origins.get('kg.store', 'default')}: "
            f"store directory {store} does not exist"
        )


def resolve_settings(settings: Settings | LoadedSettings | str | Path | None) -> Settings:
    """What `PoG.from_settings` and `SymbolLKG.from_settings` take, as a Settings. None:
    `load_settings()` (kgreason.toml, KGREASON_CONFIG, environment, as the CLI does); a
    path: that TOML file under the same environment; else the object given. A bad file or
    value raises ConfigError naming the key and where it came from."""
    if settings is None or isinstance(settings, str | Path):
        return load_settings(settings).settings
    if isinstance(settings, LoadedSettings):
        return settings.settings
    if isinstance(settings, Settings):
        return settings
    raise TypeError(
        f"settings must be a Settings, LoadedSettings, a TOML path or None, not "
        f"{type(settings).__name__}"
    )
