"""causal: causal self-attention, as learners write it."""
import math

import numpy as np

from common import learner, softmax


def _qkv(i, f64=False):
    X, WQ, WK, WV = (i[k].astype(np.float64) if f64 else i[k] for k in ("X", "W_Q", "W_K", "W_V"))
    return X @ WQ, X @ WK, X @ WV


def _run(i, d, mask_k=1, fill=-np.inf, inverted=False, scale=None, axis=-1, f64=False):
    Q, K, V = _qkv(i, f64)
    n = Q.shape[0]
    scores = Q @ K.T
    scaled = scores / (math.sqrt(d["d_k"]) if scale is None else scale)
    blocked = np.triu(np.ones((n, n), dtype=bool), k=mask_k)
    if inverted:
        blocked = ~blocked
    masked = np.where(blocked, fill, scaled)
    w = softmax(masked, axis=axis)
    return dict(Q=Q, K=K, V=V, scores=scores, scaled_scores=scaled, masked_scores=masked, weights=w, output=w @ V)


@learner("correct")
def triu_inf(i, d):
    return _run(i, d)


@learner("correct")
def fill_minus_1e9_float64(i, d):
    return _run(i, d, fill=-1e9, f64=True)


@learner("correct")
def torch_masked_fill(i, d):
    import torch
    X, WQ, WK, WV = (torch.from_numpy(i[k]) for k in ("X", "W_Q", "W_K", "W_V"))
    Q, K, V = X @ WQ, X @ WK, X @ WV
    n = X.shape[0]
    s = Q @ K.T / math.sqrt(K.shape[-1])
    mask = torch.tril(torch.ones(n, n, dtype=torch.bool))
    m = s.masked_fill(~mask, float("-inf"))
    w = torch.softmax(m, dim=-1)
    return dict(scaled_scores=s, masked_scores=m, weights=w, output=w @ V)


@learner("correct")
def output_only_tril(i, d):
    Q, K, V = _qkv(i)
    n = Q.shape[0]
    s = Q @ K.T / np.sqrt(d["d_k"])
    s[np.tril(np.ones((n, n))) == 0] = -np.inf
    return dict(output=softmax(s) @ V)


@learner("buggy", note="mask leaks one token: triu(k=2)")
def leak_one(i, d):
    return _run(i, d, mask_k=2)


@learner("buggy", note="mask leaks one token, output only")
def leak_one_output_only(i, d):
    return {"output": _run(i, d, mask_k=2)["output"]}


@learner("buggy", names=["causal-wrong-diagonal"])
def blocks_diagonal(i, d):
    r = _run(i, d, mask_k=0)
    with np.errstate(all="ignore"):
        e = np.exp(r["masked_scores"] - r["masked_scores"].max(-1, keepdims=True))
        r["weights"] = e / e.sum(-1, keepdims=True)
    r["output"] = r["weights"] @ r["V"]
    return r


@learner("buggy", names=["mask-inverted"])
def inverted(i, d):
    return _run(i, d, inverted=True)


@learner("buggy", names=["mask-fill-zero"])
def fill_zero(i, d):
    return _run(i, d, fill=0.0)


@learner("buggy", names=["mask-tiny-value"])
def fill_tiny(i, d):
    return _run(i, d, fill=-1e-9)


@learner("buggy", names=["no-scale"])
def no_scale(i, d):
    return _run(i, d, scale=1.0)


@learner("buggy", names=["scale-by-d-model"], strict=True)
def scale_d_model(i, d):
    if d["d_model"] == d["d_k"]:
        return None  # √d_model is √d_k at these dims: the right answer
    return _run(i, d, scale=math.sqrt(i["X"].shape[1]))


@learner("buggy", names=["softmax-wrong-dim"])
def softmax_dim0(i, d):
    return _run(i, d, axis=0)


@learner("buggy", names=["mask-after-softmax"])
def mask_after_softmax(i, d):
    Q, K, V = _qkv(i)
    n = Q.shape[0]
    s = Q @ K.T / np.sqrt(d["d_k"])
    w = softmax(s)
    w = w * np.tril(np.ones((n, n)))
    return dict(scaled_scores=s, weights=w, output=w @ V)


@learner("buggy", note="torch masked_fill result thrown away")
def masked_fill_not_in_place(i, d):
    import torch
    X, WQ, WK, WV = (torch.from_numpy(i[k]) for k in ("X", "W_Q", "W_K", "W_V"))
    Q, K, V = X @ WQ, X @ WK, X @ WV
    n = X.shape[0]
    s = Q @ K.T / math.sqrt(K.shape[-1])
    s.masked_fill(torch.triu(torch.ones(n, n, dtype=torch.bool), 1), float("-inf"))  # returns a copy
    w = torch.softmax(s, dim=-1)
    return dict(scaled_scores=s, masked_scores=s, weights=w, output=w @ V)


@learner("buggy", names=["no-scale"], note="two bugs: no scale and a leaking mask")
def no_scale_and_leak(i, d):
    return _run(i, d, scale=1.0, mask_k=2)


@learner("buggy", note="K @ Q.T with the mask")
def k_at_q(i, d):
    Q, K, V = _qkv(i)
    n = Q.shape[0]
    scores = K @ Q.T
    scaled = scores / np.sqrt(d["d_k"])
    masked = np.where(np.triu(np.ones((n, n), dtype=bool), 1), -np.inf, scaled)
    w = softmax(masked)
    return dict(Q=Q, K=K, scores=scores, scaled_scores=scaled, masked_scores=masked, weights=w, output=w @ V)
