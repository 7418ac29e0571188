"""What `PoG.from_settings` and `SymbolLKG.from_settings` share: turning "settings, a path
to a settings file, or nothing" into a `Settings`, and the LLM the settings describe."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kgreason.config import LoadedSettings, Settings
    from kgreason.llm.base import ChatLLM
    from kgreason.llm.usage import Budget


def resolve_settings(settings: Settings | LoadedSettings | str | Path | None) -> Settings:
    """None: `load_settings()` (kgreason.toml, KGREASON_CONFIG, environment, as the CLI
    does); a path: that TOML file under the same environment; else the object given.
    A bad file or value raises ConfigError naming the key and where it came from."""
    from kgreason.config import LoadedSettings, Settings, load_settings

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


def configured_llm(s: Settings) -> ChatLLM | None:
    """The LLM stack of `s.llm` (retries, concurrency limit, cache), or None when no
    endpoint or key is configured."""
    from kgreason.llm.factory import build_llm, llm_configured

    return build_llm(s.llm) if llm_configured(s.llm) else None


def budget_of(s: Settings) -> Budget:
    from kgreason.llm.usage import Budget

    return Budget(s.llm.max_calls_per_question, s.llm.max_tokens_per_question)
