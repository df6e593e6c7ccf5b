"""padding: batched attention with key padding, as learners write it."""
import math

import numpy as np

from common import learner, softmax


def _run(i, d, rule="keys", scale=None, axis=-1, nan_rows=False, f64=False):
    X, WQ, WK, WV = (i[k].astype(np.float64) if f64 else i[k] for k in ("X", "W_Q", "W_K", "W_V"))
    lengths = i["lengths"]
    B, n, _ = X.shape
    Q, K, V = X @ WQ, X @ WK, X @ WV
    scores = Q @ np.swapaxes(K, -1, -2)
    scaled = scores / (math.sqrt(d["d_k"]) if scale is None else scale)
    pos = np.arange(n)
    if rule == "keys":
        blocked = pos[None, None, :] >= lengths[:, None, None]
    elif rule == "queries":
        blocked = pos[None, :, None] >= lengths[:, None, None]
    elif rule == "backwards":
        blocked = pos[None, None, :] < lengths[:, None, None]
    elif rule == "off-by-one":
        blocked = pos[None, None, :] >= lengths[:, None, None] - 1
    blocked = np.broadcast_to(blocked, scores.shape)
    masked = np.where(blocked, -np.inf, scaled)
    if nan_rows:
        e = np.exp(masked - masked.max(axis, keepdims=True))
        w = e / e.sum(axis, keepdims=True)
    else:
        w = softmax(masked, axis=axis)
    return dict(scores=scores, masked_scores=masked, weights=w, output=w @ V)


@learner("correct")
def broadcast_mask(i, d):
    return _run(i, d)


@learner("correct")
def loop_per_item_float64(i, d):
    X, WQ, WK, WV = (i[k].astype(np.float64) for k in ("X", "W_Q", "W_K", "W_V"))
    out = []
    for b in range(X.shape[0]):
        L = int(i["lengths"][b])
        q, k, v = X[b] @ WQ, X[b] @ WK, X[b] @ WV
        s = q @ k.T / np.sqrt(k.shape[1])
        s[:, L:] = -np.inf
        out.append(softmax(s) @ v)
    return {"output": np.stack(out)}


@learner("correct")
def torch_key_padding(i, d):
    import torch
    X, WQ, WK, WV = (torch.from_numpy(i[k]) for k in ("X", "W_Q", "W_K", "W_V"))
    lengths = torch.from_numpy(i["lengths"])
    Q, K, V = X @ WQ, X @ WK, X @ WV
    s = Q @ K.transpose(1, 2)
    pad = torch.arange(X.shape[1])[None, :] >= lengths[:, None]
    m = (s / math.sqrt(K.shape[-1])).masked_fill(pad[:, None, :], float("-inf"))
    w = torch.nan_to_num(torch.softmax(m, dim=-1), nan=0.0)
    return dict(scores=s, masked_scores=m, weights=w, output=w @ V)


@learner("buggy", names=["padding-on-queries"])
def mask_on_queries(i, d):
    return _run(i, d, rule="queries")


@learner("buggy", note="padding mask backwards")
def mask_backwards(i, d):
    return _run(i, d, rule="backwards")


@learner("buggy", note="padding mask off by one")
def mask_off_by_one(i, d):
    return _run(i, d, rule="off-by-one")


@learner("buggy", names=["no-scale"])
def no_scale(i, d):
    return _run(i, d, scale=1.0)


@learner("buggy", names=["scale-by-d-model"])
def scale_d_model(i, d):
    if d["d_model"] == d["d_k"]:
        return None  # √d_model is √d_k at these dims: the right answer
    return _run(i, d, scale=math.sqrt(i["X"].shape[-1]))


@learner("buggy", names=["all-masked-row"])
def nan_for_empty_rows(i, d):
    return _run(i, d, nan_rows=True)


@learner("buggy", names=["softmax-wrong-dim"])
def softmax_over_queries(i, d):
    return _run(i, d, axis=-2)


@learner("buggy", names=["padding-on-queries"], note="output only")
def mask_on_queries_output_only(i, d):
    return {"output": _run(i, d, rule="queries")["output"]}
