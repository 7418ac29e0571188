"""The embedded store: a directory of memory-mapped numpy arrays (see docs/kg-store.md)."""

from kgreason.kg.store.build import StoreExistsError, build_store
from kgreason.kg.store.format import StoreFormatError
from kgreason.kg.store.kg import StoreKG

__all__ = ["StoreExistsError", "StoreFormatError", "StoreKG", "build_store"]
