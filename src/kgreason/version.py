"""kgreason's version, in a module below every other so any layer can name it (the
User-Agent of the LLM and SPARQL clients) without importing the package's API."""

__version__ = "0.1.0"
