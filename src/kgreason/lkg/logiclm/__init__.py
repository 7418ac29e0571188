"""Readers for the program formats Logic-LM released (FOLIO first-order logic, ProntoQA /
ProofWriter Pyke-style rules, LogicalDeduction / AR-LSAT constraint programs), translated
to kgreason's solvers. Import the submodule you need (`fol`, `pyke`, ...)."""
