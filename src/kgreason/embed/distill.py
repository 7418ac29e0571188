"""Offline model2vec-style distillation of a static embedding table from a transformer.

model2vec's own `distill` needs the `skeletoken` package (its `distill` extra), which is not a
kgreason dependency, so this reimplements the same recipe (model2vec 0.10, `distill_from_model`
without a custom vocabulary) with transformers + numpy only:

1. take the teacher's WordPiece vocabulary, dropping `[unusedN]` and the added special tokens
   other than `[PAD]` and `[UNK]` (model2vec's pruning, as in its output);
2. embed every token alone as `[CLS] token [SEP]` with the teacher, mean-pooled over the three
   positions (the teacher's own pooling);
3. PCA to `pca_dims` (eigendecomposition of the covariance, sign fixed per component);
4. weight each row by SIF, a / (a + p(rank)), p from Zipf's law over the id order;
5. store in model2vec's format (loadable with `model2vec.StaticModel`): float16 rows with the
   weights multiplied in (as model2vec does), or, the default, int8 rows with one global scale
   and the weights kept as a separate float32 `weights` tensor, which model2vec applies at
   encode time. Scaling before int8 would crush the rows of frequent tokens (weights ~1e-3) to
   zero; kept apart, int8 halves the size of float16 with no measurable loss (bench/).

Run: `python -m kgreason.embed.distill OUT_DIR [--pca-dims 256]` (defaults: bundled MiniLM).
"""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kgreason.embed.offline import hub_offline

UNUSED_TOKEN = r"\[unused\d+\]"


@dataclass(frozen=True)
class DistillParams:
    pca_dims: int = 256
    sif_coefficient: float = 1e-4
    token_remove_pattern: str = UNUSED_TOKEN
    dtype: str = "int8"
    batch_size: int = 256


def kept_vocabulary(tokenizer_json: dict, remove_pattern: str) -> list[tuple[str, int]]:
    """(token, original id) sorted by id, without tokens matching `remove_pattern` and without
    added tokens other than the pad and unk tokens (as model2vec's pruning leaves it)."""
    pattern = re.compile(remove_pattern)
    keep_added = {tokenizer_json["model"].get("unk_token")}
    if tokenizer_json.get("padding"):
        keep_added.add(tokenizer_json["padding"]["pad_token"])
    dropped = {t["content"] for t in tokenizer_json["added_tokens"]} - keep_added
    vocab = tokenizer_json["model"]["vocab"]
    return sorted(
        ((t, i) for t, i in vocab.items() if not pattern.match(t) and t not in dropped),
        key=lambda x: x[1],
    )


def pruned_tokenizer_json(tokenizer_json: dict, kept: list[tuple[str, int]]) -> dict:
    """The teacher's tokenizer with contiguous new ids, no post-processor, padding or truncation."""
    new_ids = {tok: new for new, (tok, _) in enumerate(kept)}
    out = json.loads(json.dumps(tokenizer_json))
    out["model"]["vocab"] = new_ids
    out["added_tokens"] = [
        {**t, "id": new_ids[t["content"]]} for t in out["added_tokens"] if t["content"] in new_ids
    ]
    out["post_processor"] = None
    out["truncation"] = None
    if out.get("padding"):
        pad = out["padding"]["pad_token"]
        out["padding"] = {**out["padding"], "strategy": "BatchLongest", "pad_id": new_ids[pad]}
    return out


def token_embeddings(model, ids: list[list[int]], batch_size: int) -> np.ndarray:
    """Mean-pooled last hidden state of each id sequence (all sequences have equal length)."""
    import torch

    rows: list[np.ndarray] = []
    with torch.inference_mode():
        for start in range(0, len(ids), batch_size):
            batch = torch.tensor(ids[start : start + batch_size], dtype=torch.long)
            mask = torch.ones_like(batch)
            out = model(
                input_ids=batch, attention_mask=mask, token_type_ids=torch.zeros_like(batch)
            )
            rows.append(out.last_hidden_state.float().mean(dim=1).numpy())
    return np.nan_to_num(np.concatenate(rows, axis=0))


def pca_reduce(x: np.ndarray, dims: int) -> tuple[np.ndarray, float]:
    """Project onto the top `dims` principal components; also return the explained variance."""
    x = x.astype(np.float64)
    xc = x - x.mean(axis=0)
    eigvals, eigvecs = np.linalg.eigh((xc.T @ xc) / (x.shape[0] - 1))
    eigvals, eigvecs = np.clip(eigvals[::-1], 0, None), eigvecs[:, ::-1]
    dims = min(dims, x.shape[1])
    scores = xc @ eigvecs[:, :dims]
    # Same sign convention as model2vec: the largest-magnitude score of each component is positive.
    signs = np.sign(scores[np.argmax(np.abs(scores), axis=0), np.arange(dims)])
    return scores * signs, float(eigvals[:dims].sum() / eigvals.sum())


def sif_weights(n: int, coefficient: float) -> np.ndarray:
    """a / (a + p), with p the Zipf probability of rank (id order: lower id = more frequent)."""
    inv_rank = 1.0 / np.arange(2, n + 2)
    return coefficient / (coefficient + inv_rank / inv_rank.sum())


def teacher_vectors(source: Path, params: DistillParams) -> tuple[np.ndarray, dict, list]:
    """Raw teacher embedding of every kept token (before PCA/SIF), tokenizer json, kept vocab."""
    from transformers import AutoModel

    tokenizer_json = json.loads((source / "tokenizer.json").read_text(encoding="utf-8"))
    kept = kept_vocabulary(tokenizer_json, params.token_remove_pattern)
    vocab = tokenizer_json["model"]["vocab"]
    cls_id, sep_id = vocab["[CLS]"], vocab["[SEP]"]
    with hub_offline():
        model = AutoModel.from_pretrained(str(source), local_files_only=True).eval()
    ids = [[cls_id, i, sep_id] for _, i in kept]
    return token_embeddings(model, ids, params.batch_size), tokenizer_json, kept


def finish(raw: np.ndarray, params: DistillParams) -> tuple[np.ndarray, np.ndarray | None, float]:
    """PCA + SIF weighting + dtype: the stored table, separate weights (int8 only), variance."""
    reduced, explained = pca_reduce(raw, params.pca_dims)
    weights = sif_weights(len(reduced), params.sif_coefficient)
    if params.dtype == "int8":
        # One global scale: cosine after mean pooling is invariant to it.
        scale = np.abs(reduced).max() / 127.0
        table = np.clip(np.rint(reduced / scale), -127, 127).astype(np.int8)
        return table, weights.astype(np.float32), explained
    return (reduced * weights[:, None]).astype(params.dtype), None, explained


def save_static(
    out: Path, vectors: np.ndarray, weights: np.ndarray | None, tokenizer_json: dict, config: dict
) -> None:
    """Write model2vec's layout: model.safetensors (`embeddings`[, `weights`]), tokenizer.json,
    config.json."""
    from safetensors.numpy import save_file

    out.mkdir(parents=True, exist_ok=True)
    tensors = {"embeddings": np.ascontiguousarray(vectors)}
    if weights is not None:
        tensors["weights"] = np.ascontiguousarray(weights)
    save_file(tensors, str(out / "model.safetensors"))
    (out / "tokenizer.json").write_text(json.dumps(tokenizer_json, ensure_ascii=False), "utf-8")
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n", "utf-8")


def distill(source: Path, out: Path, params: DistillParams, base_name: str | None = None) -> dict:
    """Distil `source` (a BERT-style sentence-transformers dir) into `out`; return the config."""
    raw, tokenizer_json, kept = teacher_vectors(source, params)
    vectors, weights, explained = finish(raw, params)
    config = {
        "model_type": "model2vec",
        "architectures": ["StaticModel"],
        "tokenizer_name": base_name or source.name,
        "apply_pca": params.pca_dims,
        "sif_coefficient": params.sif_coefficient,
        "hidden_dim": int(vectors.shape[1]),
        "seq_length": 1000000,
        "normalize": True,
        "pooling": "mean",
        "embedding_dtype": params.dtype,
        "max_length": 512,
        "pca_explained_variance": round(explained, 4),
        "distilled_by": "kgreason.embed.distill",
    }
    save_static(out, vectors, weights, pruned_tokenizer_json(tokenizer_json, kept), config)
    return config


def main(argv: list[str] | None = None) -> None:
    from kgreason.embed.sbert import minilm_path

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--source", type=Path, default=None, help="teacher dir (default: MiniLM)")
    ap.add_argument("--pca-dims", type=int, default=DistillParams.pca_dims)
    ap.add_argument("--sif-coefficient", type=float, default=DistillParams.sif_coefficient)
    ap.add_argument("--dtype", default=DistillParams.dtype, choices=["int8", "float16", "float32"])
    args = ap.parse_args(argv)
    params = DistillParams(args.pca_dims, args.sif_coefficient, dtype=args.dtype)
    if args.source is None:
        config = distill(minilm_path(), args.out, params, "sentence-transformers/all-MiniLM-L6-v2")
    else:
        config = distill(args.source, args.out, params)
    print(json.dumps(config, indent=2))


if __name__ == "__main__":
    main()
