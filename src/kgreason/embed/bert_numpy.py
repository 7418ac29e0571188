"""A BERT encoder forward pass in numpy (float32): what all-MiniLM-L6-v2 needs, without torch.

Post-LayerNorm BERT as in Hugging Face's `BertModel` (absolute positions, token type 0, exact
erf GELU, LayerNorm eps 1e-12), followed by sentence-transformers' mean pooling over the
attention mask and L2 normalisation. Weights are plain float32 arrays (see `BertWeights`);
`kgreason.embed.minilm` loads them and batches the texts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

LN_EPS = 1e-12
_MASKED = np.float32(-1e9)  # additive attention bias of a padding key


@dataclass(frozen=True)
class Layer:
    """One encoder layer; matrices are stored (in, out) so `x @ w` needs no transpose."""

    qkv_w: np.ndarray  # (hidden, 3*hidden): query, key, value side by side
    qkv_b: np.ndarray
    attn_out_w: np.ndarray
    attn_out_b: np.ndarray
    attn_ln_w: np.ndarray
    attn_ln_b: np.ndarray
    inter_w: np.ndarray
    inter_b: np.ndarray
    out_w: np.ndarray
    out_b: np.ndarray
    out_ln_w: np.ndarray
    out_ln_b: np.ndarray


@dataclass(frozen=True)
class BertWeights:
    word: np.ndarray  # (vocab, hidden)
    position: np.ndarray  # (max_positions, hidden)
    token_type0: np.ndarray  # (hidden,)
    emb_ln_w: np.ndarray
    emb_ln_b: np.ndarray
    layers: tuple[Layer, ...]
    num_heads: int

    @property
    def hidden(self) -> int:
        return int(self.word.shape[1])

    @property
    def max_positions(self) -> int:
        return int(self.position.shape[0])


def layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    """LayerNorm over the last axis, in place (x is overwritten and returned)."""
    x -= x.mean(axis=-1, keepdims=True)
    var = np.einsum("...i,...i->...", x, x)[..., None]
    var /= np.float32(x.shape[-1])
    var += np.float32(LN_EPS)
    np.sqrt(var, out=var)
    x /= var
    x *= w
    x += b
    return x


def erf(x: np.ndarray) -> np.ndarray:
    """Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7, below float32 resolution of GELU's output);
    numpy has no erf and scipy is not a runtime dependency."""
    a1, a2, a3, a4, a5 = 0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429
    s = np.sign(x)
    ax = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * ax)
    poly = ((((a5 * t + a4) * t + a3) * t + a2) * t + a1) * t
    return s * (1.0 - poly * np.exp(-ax * ax))


def gelu(x: np.ndarray) -> np.ndarray:
    """BERT's exact GELU, x * Phi(x), with `erf`'s formula computed in place in float32: it is
    the largest element-wise cost of the encoder, and fresh large temporaries are slow."""
    f = np.float32
    z = np.abs(x)
    z *= f(0.7071067811865476)
    t = z * f(0.3275911)
    t += f(1.0)
    np.reciprocal(t, out=t)
    poly = t * f(1.061405429)
    for c in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        poly += f(c)
        poly *= t
    np.square(z, out=z)
    np.negative(z, out=z)
    np.exp(z, out=z)
    poly *= z  # 1 - erf(|x|/sqrt 2)
    poly *= x
    poly *= f(0.5)  # h = x (1 - erf(|x|/sqrt 2)) / 2
    # x >= 0: x Phi(x) = x - h; x < 0: x Phi(x) = h (erf is odd)
    np.subtract(x, poly, out=poly, where=x >= 0)
    return poly


def attention(x: np.ndarray, bias: np.ndarray, layer: Layer, heads: int) -> np.ndarray:
    """Multi-head self-attention of x (batch, seq, hidden); bias (batch, seq) masks padding."""
    b, n, h = x.shape
    d = h // heads
    qkv = x.reshape(b * n, h) @ layer.qkv_w
    qkv += layer.qkv_b
    qkv = qkv.reshape(b, n, 3, heads, d).transpose(2, 0, 3, 1, 4)  # (3, b, heads, n, d)
    q, k, v = qkv[0], qkv[1], qkv[2]
    scores = (q @ k.transpose(0, 1, 3, 2)) * np.float32(1.0 / np.sqrt(d))
    scores += bias[:, None, None, :]
    scores -= scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=-1, keepdims=True)
    ctx = (scores @ v).transpose(0, 2, 1, 3).reshape(b * n, h)
    out = ctx @ layer.attn_out_w
    out += layer.attn_out_b
    return out.reshape(b, n, h)


def encode(ids: np.ndarray, mask: np.ndarray, w: BertWeights) -> np.ndarray:
    """Mean-pooled, unit-normalised sentence vectors of padded token ids (batch, seq)."""
    b, n = ids.shape
    x = w.word[ids]
    x += w.position[:n][None, :, :]
    x += w.token_type0
    x = layer_norm(x, w.emb_ln_w, w.emb_ln_b)
    bias = np.where(mask > 0, np.float32(0.0), _MASKED).astype(np.float32)
    for layer in w.layers:
        attn = attention(x, bias, layer, w.num_heads)
        attn += x
        x = layer_norm(attn, layer.attn_ln_w, layer.attn_ln_b)
        inter = x.reshape(b * n, -1) @ layer.inter_w
        inter += layer.inter_b
        out = gelu(inter) @ layer.out_w
        out += layer.out_b
        out = out.reshape(b, n, -1)
        out += x
        x = layer_norm(out, layer.out_ln_w, layer.out_ln_b)
    m = mask.astype(np.float32)[:, :, None]
    pooled = (x * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
