"""Path scorers over feature rows: a linear model (conditional logit) and a one-hidden-layer
MLP, both trained with a listwise softmax loss over each question's candidates.

Ask-time scoring is `Scorer.score(X)`: numpy only. `Projection` is the PCA of the
embedder's vectors fitted at training time (kept small so training stays in minutes).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class Projection:
    """x -> unit((x - mean) @ components.T): the embedder's vectors in k dimensions."""

    mean: np.ndarray
    components: np.ndarray

    @classmethod
    def fit(cls, vectors: np.ndarray, k: int) -> Projection:
        x = np.unique(np.asarray(vectors, dtype=np.float64), axis=0)
        # components beyond the data's rank would be arbitrary directions: never keep them
        k = max(1, min(k, len(x) - 1))
        mean = x.mean(0)
        _, _, vt = np.linalg.svd(x - mean, full_matrices=False)
        return cls(mean.astype(np.float32), vt[:k].astype(np.float32))

    def __call__(self, v: np.ndarray) -> np.ndarray:
        y = (np.asarray(v, dtype=np.float32) - self.mean) @ self.components.T
        return y / np.maximum(np.linalg.norm(y, axis=-1, keepdims=True), 1e-8)

    @property
    def dim(self) -> int:
        return int(self.components.shape[0])


@dataclass
class Scorer:
    """kind "linear": s = z.w + b;  kind "mlp": s = relu(z W1 + b1).w2 + b2,
    with z = (x - mu) / sd the standardised feature row."""

    kind: str
    mu: np.ndarray
    sd: np.ndarray
    params: dict[str, np.ndarray] = field(default_factory=dict)
    #: first_layer(self), computed on first use at ask time (parameters are fixed by then)
    folded: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)

    def score(self, x: np.ndarray) -> np.ndarray:
        z = (x - self.mu) / self.sd
        p = self.params
        if self.kind == "linear":
            return z @ p["w"] + p["b"][0]
        h = np.maximum(z @ p["W1"] + p["b1"], 0.0)
        return h @ p["w2"] + p["b2"][0]

    def n_params(self) -> int:
        return int(sum(v.size for v in self.params.values()))


def init_scorer(kind: str, mu: np.ndarray, sd: np.ndarray, hidden: int, seed: int) -> Scorer:
    rng = np.random.default_rng(seed)
    f = mu.shape[0]
    if kind == "linear":
        params = {"w": np.zeros(f, np.float32), "b": np.zeros(1, np.float32)}
    elif kind == "mlp":
        params = {
            "W1": (rng.standard_normal((f, hidden)) * np.sqrt(2.0 / f)).astype(np.float32),
            "b1": np.zeros(hidden, np.float32),
            "w2": (rng.standard_normal(hidden) * np.sqrt(1.0 / hidden)).astype(np.float32),
            "b2": np.zeros(1, np.float32),
        }
    else:
        raise ValueError(f"unknown ranker model kind {kind!r} (linear, mlp)")
    return Scorer(kind, mu.astype(np.float32), sd.astype(np.float32), params)


def listwise_step(
    m: Scorer, x: np.ndarray, target: np.ndarray, valid: np.ndarray, l2: float
) -> tuple[float, dict[str, np.ndarray]]:
    """Loss and gradients for a batch. x: (B, K, F); target: (B, K) rows summing to 1;
    valid: (B, K) bool. Loss = mean over questions of -sum_k t_k log softmax(s)_k."""
    b, k, f = x.shape
    z = ((x - m.mu) / m.sd).reshape(b * k, f)
    p = m.params
    if m.kind == "linear":
        s = z @ p["w"] + p["b"][0]
    else:
        pre = z @ p["W1"] + p["b1"]
        h = np.maximum(pre, 0.0)
        s = h @ p["w2"] + p["b2"][0]
    s = np.where(valid, s.reshape(b, k), -1e9)
    s = s - s.max(1, keepdims=True)
    logp = s - np.log(np.exp(s).sum(1, keepdims=True))
    loss = float(-(target * np.where(valid, logp, 0.0)).sum() / b)
    ds = ((np.exp(logp) - target) * valid / b).reshape(b * k).astype(np.float32)
    g: dict[str, np.ndarray] = {}
    if m.kind == "linear":
        g["w"] = z.T @ ds + l2 * p["w"]
        g["b"] = np.array([ds.sum()], np.float32)
    else:
        g["w2"] = h.T @ ds + l2 * p["w2"]
        g["b2"] = np.array([ds.sum()], np.float32)
        dh = np.outer(ds, p["w2"]) * (pre > 0)
        g["W1"] = z.T @ dh + l2 * p["W1"]
        g["b1"] = dh.sum(0)
    return loss, g


class Adam:
    def __init__(self, params: dict[str, np.ndarray], lr: float):
        self.lr = lr
        self.m = {k: np.zeros_like(v) for k, v in params.items()}
        self.v = {k: np.zeros_like(v) for k, v in params.items()}
        self.t = 0

    def step(self, params: dict[str, np.ndarray], grads: dict[str, np.ndarray]) -> None:
        self.t += 1
        b1, b2, eps = 0.9, 0.999, 1e-8
        for k, g in grads.items():
            self.m[k] = b1 * self.m[k] + (1 - b1) * g
            self.v[k] = b2 * self.v[k] + (1 - b2) * g * g
            mh = self.m[k] / (1 - b1**self.t)
            vh = self.v[k] / (1 - b2**self.t)
            params[k] -= (self.lr * mh / (np.sqrt(vh) + eps)).astype(np.float32)


def first_layer(m: Scorer) -> tuple[np.ndarray, np.ndarray]:
    """(A, c) with z @ W == x @ A + c: the standardisation folded into the first layer
    (W = the linear weights as one column for a linear model)."""
    w = m.params["W1"] if m.kind == "mlp" else m.params["w"][:, None]
    b = m.params["b1"] if m.kind == "mlp" else m.params["b"]
    a = (w / m.sd[:, None]).astype(np.float64)
    return a, b.astype(np.float64) - (m.mu / m.sd).astype(np.float64) @ w.astype(np.float64)


def score_one_question(
    m: Scorer,
    q: np.ndarray,
    rel: np.ndarray,
    sign: np.ndarray,
    scalars: np.ndarray,
    relvec: np.ndarray,
    n_slots: int,
) -> np.ndarray:
    """`m.score(build_rows(...))` for the paths of ONE question, without building the k*k
    outer-product features: sum_ij q_i r_j A[ij] = r @ (q @ A_outer), computed once per
    question and per relation. Same result, far fewer operations (no large matrix product,
    so no BLAS threads spun up for a few dozen rows on a loaded machine)."""
    if m.folded is None:
        m.folded = first_layer(m)
    a, c = m.folded
    k = q.shape[0]
    h = a.shape[1]
    n = rel.shape[0]
    q64, rv = q.astype(np.float64), relvec.astype(np.float64)
    pre = np.tile(c + q64 @ a[:k], (n, 1))
    off = k
    small_cols = []
    for s in range(n_slots):
        outer = a[off : off + k * k].reshape(k, k, h)
        souter = a[off + k * k : off + 2 * k * k].reshape(k, k, h)
        ar = a[off + 2 * k * k : off + 2 * k * k + k]
        asr = a[off + 2 * k * k + k : off + 2 * k * k + 2 * k]
        off += 2 * k * k + 2 * k
        plain = rv @ (np.einsum("i,ijh->jh", q64, outer) + ar)  # (V, h)
        signed = rv @ (np.einsum("i,ijh->jh", q64, souter) + asr)
        present = rel[:, s] >= 0
        idx = np.maximum(rel[:, s], 0)
        sg = sign[:, s].astype(np.float64)
        pre += present[:, None] * (plain[idx] + sg[:, None] * signed[idx])
        cos = present * (rv[idx] @ q64)
        small_cols += [present.astype(np.float64), sg, cos, sg * cos]
    small = np.column_stack([*small_cols, scalars.astype(np.float64)])
    pre += np.einsum("nf,fh->nh", small, a[off:])
    if m.kind == "linear":
        return pre[:, 0].astype(np.float32)
    hid = np.maximum(pre, 0.0)
    return (hid @ m.params["w2"].astype(np.float64) + m.params["b2"][0]).astype(np.float32)
