"""kgreason: LLM reasoning grounded in knowledge graphs and checked by symbolic solvers."""

__version__ = "0.1.0"
