"""Evaluation: dataset loaders, strict and paper-compatible metrics, runner and reports."""
