"""Paths-over-Graph (Tan et al., WWW 2025): one module per stage, and the pipeline."""
