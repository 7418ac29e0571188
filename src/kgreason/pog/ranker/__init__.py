"""A path ranker trained from question-answer pairs, and a zero-shot ranking.

    supervision.py  weak labels: candidate paths from kgreason's graph side, scored vs gold
    features.py     (masked question, path) -> feature rows (numpy only)
    model.py        linear / MLP scorers (numpy forward pass; numpy training)
    train.py        template split, training loop, validation report
    artefact.py     versioned artefact on disk (weights + spec + provenance), KG checks
    selector.py     `LearnedSelector`, a FuzzySelector drop-in for LLM-free mode and PoG
    zeroshot.py     hop-aligned similarity (no training data)

Ask-time scoring imports numpy and the embedder only.
"""
