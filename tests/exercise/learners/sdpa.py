"""sdpa: single-head scaled dot-product attention, as learners write it."""
import math

import numpy as np

from common import learner, softmax


def _qkv(i, f64=False):
    X, WQ, WK, WV = (i[k].astype(np.float64) if f64 else i[k] for k in ("X", "W_Q", "W_K", "W_V"))
    return X @ WQ, X @ WK, X @ WV


@learner("correct")
def numpy_float32(i, d):
    Q, K, V = _qkv(i)
    scores = Q @ K.T
    scaled = scores / np.sqrt(K.shape[-1])
    w = softmax(scaled)
    return dict(Q=Q, K=K, V=V, scores=scores, scaled_scores=scaled, weights=w, output=w @ V)


@learner("correct")
def numpy_float64_output_only(i, d):
    Q, K, V = _qkv(i, True)
    s = Q @ K.T / math.sqrt(Q.shape[1])
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return dict(output=(e / e.sum(axis=1, keepdims=True)) @ V)


@learner("correct")
def torch_style(i, d):
    import torch
    X, WQ, WK, WV = (torch.from_numpy(i[k]) for k in ("X", "W_Q", "W_K", "W_V"))
    Q, K, V = X @ WQ, X @ WK, X @ WV
    scores = Q @ K.transpose(-2, -1)
    scaled = scores / math.sqrt(Q.size(-1))
    w = torch.softmax(scaled, dim=-1)
    return dict(Q=Q, K=K, V=V, scores=scores, scaled_scores=scaled, weights=w, output=w @ V)


@learner("correct")
def einsum_float64(i, d):
    X, WQ, WK, WV = (i[k].astype(np.float64) for k in ("X", "W_Q", "W_K", "W_V"))
    Q, K, V = np.einsum("nd,dk->nk", X, WQ), np.einsum("nd,dk->nk", X, WK), np.einsum("nd,dk->nk", X, WV)
    scores = np.einsum("ik,jk->ij", Q, K)
    w = softmax(scores / np.sqrt(d["d_k"]))
    return dict(scores=scores, weights=w, output=np.einsum("ij,jv->iv", w, V))


@learner("buggy", note="K @ Q.T")
def k_at_q(i, d):
    Q, K, V = _qkv(i)
    scores = K @ Q.T
    scaled = scores / np.sqrt(d["d_k"])
    w = softmax(scaled)
    return dict(Q=Q, K=K, V=V, scores=scores, scaled_scores=scaled, weights=w, output=w @ V)


@learner("buggy", names=["no-scale"])
def no_scale(i, d):
    Q, K, V = _qkv(i)
    scores = Q @ K.T
    w = softmax(scores)
    return dict(Q=Q, K=K, V=V, scores=scores, scaled_scores=scores, weights=w, output=w @ V)


@learner("buggy", names=["no-scale"])
def no_scale_output_only(i, d):
    Q, K, V = _qkv(i)
    return dict(output=softmax(Q @ K.T) @ V)


@learner("buggy", names=["scale-by-d-k"])
def scale_by_dk(i, d):
    Q, K, V = _qkv(i)
    scores = Q @ K.T
    scaled = scores / d["d_k"]
    w = softmax(scaled)
    return dict(scores=scores, scaled_scores=scaled, weights=w, output=w @ V)


@learner("buggy", names=["scale-by-d-model"], strict=True)
def scale_by_d_model(i, d):
    if d["d_model"] == d["d_k"]:
        return None  # √d_model is √d_k at these dims: the right answer, nothing to tell apart
    Q, K, V = _qkv(i)
    scores = Q @ K.T
    scaled = scores / np.sqrt(i["X"].shape[-1])
    w = softmax(scaled)
    return dict(Q=Q, K=K, V=V, scores=scores, scaled_scores=scaled, weights=w, output=w @ V)


@learner("buggy", names=["softmax-wrong-dim"])
def softmax_dim0(i, d):
    Q, K, V = _qkv(i)
    scores = Q @ K.T
    scaled = scores / np.sqrt(d["d_k"])
    w = softmax(scaled, axis=0)
    return dict(scores=scores, scaled_scores=scaled, weights=w, output=w @ V)


@learner("buggy", note="sum without keepdims")
def sum_no_keepdims(i, d):
    Q, K, V = _qkv(i)
    scaled = Q @ K.T / np.sqrt(d["d_k"])
    e = np.exp(scaled - scaled.max(-1, keepdims=True))
    w = e / e.sum(-1)  # broadcasts over the columns
    return dict(scaled_scores=scaled, weights=w, output=w @ V)


@learner("buggy", note="global normalisation")
def normalise_all(i, d):
    Q, K, V = _qkv(i)
    scaled = Q @ K.T / np.sqrt(d["d_k"])
    e = np.exp(scaled - scaled.max())
    w = e / e.sum()
    return dict(scaled_scores=scaled, weights=w, output=w @ V)


@learner("buggy", names=["linear-weight-layout"])
def linear_layout_q(i, d):
    X = i["X"]
    if i["W_Q"].shape[0] != i["W_Q"].shape[1]:
        return None  # X @ W_Q.T raises a shape error at these dims: nothing to grade
    Q, K, V = X @ i["W_Q"].T, X @ i["W_K"], X @ i["W_V"]
    w = softmax(Q @ K.T / np.sqrt(d["d_k"]))
    return dict(Q=Q, K=K, V=V, weights=w, output=w @ V)


@learner("buggy", names=["linear-weight-layout"], note="nn.Linear layout on all three")
def linear_layout_all(i, d):
    X = i["X"]
    if any(i[w].shape[0] != i[w].shape[1] for w in ("W_Q", "W_K", "W_V")):
        return None
    Q, K, V = X @ i["W_Q"].T, X @ i["W_K"].T, X @ i["W_V"].T
    scores = Q @ K.T
    w = softmax(scores / np.sqrt(d["d_k"]))
    return dict(Q=Q, K=K, V=V, scores=scores, weights=w, output=w @ V)


@learner("buggy", note="Q projected with W_K")
def q_with_wk(i, d):
    X = i["X"]
    Q, K, V = X @ i["W_K"], X @ i["W_K"], X @ i["W_V"]
    scores = Q @ K.T
    w = softmax(scores / np.sqrt(d["d_k"]))
    return dict(Q=Q, K=K, V=V, scores=scores, weights=w, output=w @ V)


@learner("buggy", names=["no-scale"], note="two bugs: K @ Q.T and no scale")
def two_bugs_kq_noscale(i, d):
    Q, K, V = _qkv(i)
    scores = K @ Q.T
    w = softmax(scores)
    return dict(Q=Q, K=K, V=V, scores=scores, scaled_scores=scores, weights=w, output=w @ V)


@learner("buggy", note="output = weights.T @ V")
def weights_transposed_in_output(i, d):
    Q, K, V = _qkv(i)
    scores = Q @ K.T
    scaled = scores / np.sqrt(d["d_k"])
    w = softmax(scaled)
    return dict(Q=Q, K=K, V=V, scores=scores, scaled_scores=scaled, weights=w, output=w.T @ V)
