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
from typing import Any, NamedTuple

from pydantic import ValidationError, model_validator
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


class Range(NamedTuple):
    """Allowed values of a numeric setting: lo <= v (lo < v if lo_open) and v <= hi."""

    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False

    def check(self, v: float) -> str | None:
        """Why v is out of range, or None."""
        if self.hi is not None and self.lo is not None and not (self.lo <= v <= self.hi):
            return f"must be between {self.lo:g} and {self.hi:g}"
        if self.lo is not None and (v <= self.lo if self.lo_open else v < self.lo):
            return f"must be {'greater than' if self.lo_open else 'at least'} {self.lo:g}"
        return None


AT_LEAST_1, AT_LEAST_0, POSITIVE, UNIT = Range(1), Range(0), Range(0, lo_open=True), Range(0, 1)
#: Ranges of the numeric settings whose models do not bound them themselves (a width of -1
#: or a threshold of 1.5 would otherwise run and fail far from the file that said so).
#: tests/test_config.py checks every numeric setting is bounded here, by its model, or is
#: in UNBOUNDED.
RANGES: dict[str, Range] = {
    **dict.fromkeys(("pog.w_max", "pog.d_max", "pog.w1", "pog.w2", "pog.max_tokens"), AT_LEAST_1),
    **dict.fromkeys(("pog.max_subgraph_triples", "pog.max_paths"), AT_LEAST_1),
    **dict.fromkeys(("pog.set_items", "pog.set_tokens", "pog.select_set_tokens"), AT_LEAST_1),
    **dict.fromkeys(("pog.exploration_temperature", "pog.reasoning_temperature"), AT_LEAST_0),
    **dict.fromkeys(
        (
            "pog.link_threshold",
            "pog.llm_free_length_penalty",
            "pog.llm_free_abstain_below",
            "pog.llm_free_confidence_below",
        ),
        UNIT,
    ),
    **dict.fromkeys(("tog.exploration_temperature", "tog.reasoning_temperature"), AT_LEAST_0),
    "tog.max_tokens": AT_LEAST_1,
    "tog.link_threshold": UNIT,
    "lkg.tau": UNIT,
    **dict.fromkeys(("lkg.hull_hops", "lkg.max_repairs", "lkg.temperature"), AT_LEAST_0),
    **dict.fromkeys(("lkg.top_k", "lkg.solver_memory_mb", "lkg.max_tokens"), AT_LEAST_1),
    "lkg.solver_timeout_s": POSITIVE,
    "kg.timeout_s": POSITIVE,
    "kg.max_retries": AT_LEAST_0,
    "kg.page_size": AT_LEAST_1,
    "llm.timeout_s": POSITIVE,
    **dict.fromkeys(("llm.max_retries", "llm.backoff_base_s", "llm.backoff_cap_s"), AT_LEAST_0),
    "llm.concurrency": AT_LEAST_1,
    **dict.fromkeys(("llm.max_calls_per_question", "llm.max_tokens_per_question"), AT_LEAST_1),
    "embed.batch_size": AT_LEAST_1,
    "embed.cache_size": AT_LEAST_0,
}
#: numeric settings any value of which means something
UNBOUNDED = frozenset({"pog.seed", "tog.seed"})


class RangeError(ValueError):
    """A numeric setting out of its range: `key` its dotted name, `reason` what is wrong."""

    def __init__(self, key: str, reason: str) -> None:
        super().__init__(f"{key} {reason}")  # what Settings(...) in library code shows
        self.key, self.reason = key, reason


def check_ranges(settings: BaseSettings) -> None:
    """Raise RangeError for the first setting in RANGES whose value is out of range."""
    for key, allowed in RANGES.items():
        section, name = key.split(".")
        value = getattr(getattr(settings, section), name)
        if value is None or isinstance(value, bool):
            continue
        why = allowed.check(value)
        if why is not None:
            raise RangeError(key, f"{why} (got {value!r})")


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

    @model_validator(mode="after")
    def _in_range(self) -> Settings:
        check_ranges(self)
        return self


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


def _read_file(p: Path, via: str) -> dict[str, Any]:
    """The TOML a config path names; `via` says who named it (--config, KGREASON_CONFIG)."""
    if p.is_dir():
        raise ConfigError(
            f"config file {p} (from {via}) is a directory; expected a TOML file, such as "
            f"{p / DEFAULT_CONFIG_FILE}"
        )
    if not p.is_file():
        raise ConfigError(f"config file {p} (from {via}) does not exist")
    try:
        return tomllib.loads(p.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{p}: not valid TOML: {e}") from e


def _where(origin: str, key: str, cli_flags: Mapping[str, str]) -> str:
    """The source an origin names, as an error says it: a file, a variable or a flag."""
    if origin == "cli":
        flag = cli_flags.get(key)
        return f"the command line ({flag})" if flag else "the command line"
    if origin == "default":
        return "the defaults"
    return origin.replace("file:", "", 1).replace("env:", "environment variable ", 1)


def load_settings(
    config_file: str | Path | None = None,
    cli: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    cli_flags: Mapping[str, str] | None = None,
) -> LoadedSettings:
    """Merge defaults, file, environment and CLI flags; raise ConfigError on a bad value.
    `cli_flags` (dotted key -> "--flag") lets an error name the flag a bad value came from."""
    environ = os.environ if environ is None else environ
    merged: dict[str, Any] = {}
    origins: dict[str, str] = dict.fromkeys(_known_keys(), "default")
    known = set(origins)

    path = config_file or environ.get(ENV_PREFIX + "CONFIG")
    if path is None and Path(DEFAULT_CONFIG_FILE).is_file():
        path = DEFAULT_CONFIG_FILE
    if path is not None:
        p = Path(path)
        via = "--config" if config_file else f"environment variable {ENV_PREFIX}CONFIG"
        data = _read_file(p, via)
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
        key, msg = ".".join(str(x) for x in err["loc"]), err["msg"]
        cause = (err.get("ctx") or {}).get("error")
        if isinstance(cause, RangeError):
            key, msg = cause.key, cause.reason
        where = _where(origins.get(key, "default"), key, cli_flags or {})
        raise ConfigError(f"setting '{key}' from {where}: {msg}") from None
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
