"""kgreason: LLM reasoning grounded in knowledge graphs and checked by symbolic solvers.

    import kgreason
    with kgreason.PoG.from_settings() as pog:
        result = pog.ask("who directed [Once Were Warriors]")

The names below resolve on first use (PEP 562), so `import kgreason` loads no pipeline,
numpy, pydantic or model code; `kgreason.PoG` imports only what PoG needs."""

from kgreason.version import __version__

#: Neither `typing` nor `importlib` is imported at run time (each costs more than this
#: module); type checkers treat a module-level TYPE_CHECKING constant as True.
TYPE_CHECKING = False

#: public name -> module that defines it
_EXPORTS: dict[str, str] = {
    # pipelines and their results
    "PoG": "kgreason.pog.pipeline",
    "PoGResult": "kgreason.pog.types",
    "ReasoningPath": "kgreason.pog.types",
    "AnswerEntity": "kgreason.pog.types",
    "TopicEntity": "kgreason.pog.types",
    "SymbolLKG": "kgreason.lkg.pipeline",
    "SolveResult": "kgreason.lkg.pipeline",
    "ToG": "kgreason.tog.pipeline",
    "ToGResult": "kgreason.tog.types",
    # settings
    "Settings": "kgreason.config",
    "LoadedSettings": "kgreason.config",
    "load_settings": "kgreason.config",
    # knowledge graphs
    "KnowledgeGraph": "kgreason.kg.base",
    "Triple": "kgreason.kg.base",
    "open_kg": "kgreason.kg.open",
    "MemoryKG": "kgreason.kg.memory",
    "StoreKG": "kgreason.kg.store",
    "SparqlKG": "kgreason.kg.sparql",
    # parts
    "build_llm": "kgreason.llm.factory",
    "build_embedder": "kgreason.embed.factory",
    "ChatLLM": "kgreason.llm.base",
    "Embedder": "kgreason.embed.base",
    "run_sync": "kgreason.aio",
    "freeze_warm_state": "kgreason.heap",
    # the LLM-free mode's labels (every surface shows one of these two)
    "RANKER_LABEL": "kgreason.pog.labels",
    "SIMILARITY_LABEL": "kgreason.pog.labels",
    "warm_kernels": "kgreason.heap",
    # errors
    "ConfigError": "kgreason.config",
    "KGError": "kgreason.kg.base",
    "UnknownEntityError": "kgreason.kg.base",
    "InvalidIdentifierError": "kgreason.kg.base",
    "LLMError": "kgreason.llm.base",
    "LLMTransportError": "kgreason.llm.base",
    "LLMOutputError": "kgreason.llm.base",
    "LLMBudgetExceeded": "kgreason.llm.base",
    "LKGNeedsLLM": "kgreason.lkg.pipeline",
    "EmbedderError": "kgreason.embed.errors",
}

__all__ = [
    "RANKER_LABEL",
    "SIMILARITY_LABEL",
    "AnswerEntity",
    "ChatLLM",
    "ConfigError",
    "Embedder",
    "EmbedderError",
    "InvalidIdentifierError",
    "KGError",
    "KnowledgeGraph",
    "LKGNeedsLLM",
    "LLMBudgetExceeded",
    "LLMError",
    "LLMOutputError",
    "LLMTransportError",
    "LoadedSettings",
    "MemoryKG",
    "PoG",
    "PoGResult",
    "ReasoningPath",
    "Settings",
    "SolveResult",
    "SparqlKG",
    "StoreKG",
    "SymbolLKG",
    "ToG",
    "ToGResult",
    "TopicEntity",
    "Triple",
    "UnknownEntityError",
    "__version__",
    "build_embedder",
    "build_llm",
    "freeze_warm_state",
    "load_settings",
    "open_kg",
    "run_sync",
    "warm_kernels",
]


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'kgreason' has no attribute {name!r}")
    value = getattr(__import__(module, fromlist=[name]), name)
    globals()[name] = value  # resolved once; later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})


if TYPE_CHECKING:  # what type checkers and IDEs see; never executed
    from kgreason.aio import run_sync
    from kgreason.config import ConfigError, LoadedSettings, Settings, load_settings
    from kgreason.embed.base import Embedder
    from kgreason.embed.errors import EmbedderError
    from kgreason.embed.factory import build_embedder
    from kgreason.heap import freeze_warm_state, warm_kernels
    from kgreason.kg.base import (
        InvalidIdentifierError,
        KGError,
        KnowledgeGraph,
        Triple,
        UnknownEntityError,
    )
    from kgreason.kg.memory import MemoryKG
    from kgreason.kg.open import open_kg
    from kgreason.kg.sparql import SparqlKG
    from kgreason.kg.store import StoreKG
    from kgreason.lkg.pipeline import LKGNeedsLLM, SolveResult, SymbolLKG
    from kgreason.llm.base import (
        ChatLLM,
        LLMBudgetExceeded,
        LLMError,
        LLMOutputError,
        LLMTransportError,
    )
    from kgreason.llm.factory import build_llm
    from kgreason.pog.pipeline import PoG
    from kgreason.pog.types import AnswerEntity, PoGResult, ReasoningPath, TopicEntity
