"""cross: cross-attention, as learners write it."""
import math

import numpy as np

from common import learner, softmax


def _run(i, d, swap=False, scale=None, axis=-1, kq=False, f64=False):
    X, M, WQ, WK, WV = (i[k].astype(np.float64) if f64 else i[k] for k in ("X", "memory", "W_Q", "W_K", "W_V"))
    if swap:
        X, M = M, X
    Q, K, V = X @ WQ, M @ WK, M @ WV
    scores = K @ Q.T if kq else Q @ K.T
    s = scores / (math.sqrt(d["d_k"]) if scale is None else scale)
    w = softmax(s, axis=axis)
    out = w @ V if w.shape[1] == V.shape[0] else w.T @ V
    return dict(Q=Q, K=K, V=V, scores=scores, weights=w, output=out)


@learner("correct")
def plain(i, d):
    return _run(i, d)


@learner("correct")
def float64_torch(i, d):
    import torch
    X, M, WQ, WK, WV = (torch.from_numpy(i[k]).double() for k in ("X", "memory", "W_Q", "W_K", "W_V"))
    Q, K, V = X @ WQ, M @ WK, M @ WV
    w = torch.softmax(Q @ K.mT / math.sqrt(K.shape[-1]), dim=-1)
    return {"Q": Q, "weights": w, "output": w @ V}


@learner("buggy", names=["cross-sources-swapped"], strict=True)
def sources_swapped(i, d):
    return _run(i, d, swap=True)


@learner("buggy", names=["no-scale"])
def no_scale(i, d):
    return _run(i, d, scale=1.0)


@learner("buggy", names=["softmax-wrong-dim"])
def softmax_dim0(i, d):
    return _run(i, d, axis=0)


@learner("buggy", names=["scale-by-d-model"], strict=True)
def scale_d_model(i, d):
    if d["d_model"] == d["d_k"]:
        return None  # √d_model is √d_k at these dims: the right answer
    return _run(i, d, scale=math.sqrt(i["X"].shape[1]))


@learner("buggy", note="K @ Q.T, then the output with weights.T")
def k_at_q(i, d):
    return _run(i, d, kq=True)
