"""mha: multi-head self-attention with W_O, as learners write it."""
import math

import numpy as np

from common import learner, softmax


def _run(i, d, split="transpose", merge="transpose", scale=None, w_o=True, axis=-1, f64=False):
    X, WQ, WK, WV, WO = (i[k].astype(np.float64) if f64 else i[k] for k in ("X", "W_Q", "W_K", "W_V", "W_O"))
    B, n, D = X.shape
    h = d["heads"]
    dh = D // h
    Q, K, V = X @ WQ, X @ WK, X @ WV

    def heads(t):
        if split == "reshape":
            return t.reshape(B, h, n, dh)
        return t.reshape(B, n, h, dh).transpose(0, 2, 1, 3)

    Qh, Kh, Vh = heads(Q), heads(K), heads(V)
    scores = Qh @ Kh.transpose(0, 1, 3, 2)
    scaled = scores / (math.sqrt(dh) if scale is None else scale)
    w = softmax(scaled, axis=axis)
    ho = w @ Vh
    merged = ho.reshape(B, n, D) if merge == "reshape" else ho.transpose(0, 2, 1, 3).reshape(B, n, D)
    out = merged @ WO if w_o else merged
    return dict(Q=Q, K=K, V=V, Q_heads=Qh, K_heads=Kh, V_heads=Vh, scores=scores, scaled_scores=scaled, weights=w,
                heads_output=ho, merged=merged, output=out)


@learner("correct")
def reshape_transpose(i, d):
    return _run(i, d)


@learner("correct")
def float64_output_only(i, d):
    return {"output": _run(i, d, f64=True)["output"]}


@learner("correct")
def torch_view_transpose(i, d):
    import torch
    X, WQ, WK, WV, WO = (torch.from_numpy(i[k]) for k in ("X", "W_Q", "W_K", "W_V", "W_O"))
    B, n, D = X.shape
    h = d["heads"]
    q = (X @ WQ).view(B, n, h, D // h).transpose(1, 2)
    k = (X @ WK).view(B, n, h, D // h).transpose(1, 2)
    v = (X @ WV).view(B, n, h, D // h).transpose(1, 2)
    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(D // h), dim=-1)
    ho = w @ v
    merged = ho.transpose(1, 2).contiguous().view(B, n, D)
    return dict(Q_heads=q, weights=w, heads_output=ho, merged=merged, output=merged @ WO)


@learner("correct")
def einsum_heads(i, d):
    X = i["X"]
    B, n, D = X.shape
    h = d["heads"]
    dh = D // h
    Q, K, V = (np.einsum("bnd,de->bne", X, i[w]).reshape(B, n, h, dh) for w in ("W_Q", "W_K", "W_V"))
    s = np.einsum("bqhd,bkhd->bhqk", Q, K) / np.sqrt(dh)
    w = softmax(s)
    o = np.einsum("bhqk,bkhd->bqhd", w, V).reshape(B, n, D)
    return {"scaled_scores": s, "weights": w, "output": o @ i["W_O"]}


@learner("buggy", note="heads split by reshape without transpose")
def split_by_reshape(i, d):
    return _run(i, d, split="reshape")


@learner("buggy", names=["merge-no-transpose"])
def merge_by_reshape(i, d):
    return _run(i, d, merge="reshape")


@learner("buggy", names=["merge-no-transpose"], note="output only")
def merge_by_reshape_output_only(i, d):
    return {"output": _run(i, d, merge="reshape")["output"]}


@learner("buggy", names=["scale-by-d-model"])
def scale_d_model(i, d):
    return _run(i, d, scale=math.sqrt(i["X"].shape[-1]))


@learner("buggy", names=["no-scale"])
def no_scale(i, d):
    return _run(i, d, scale=1.0)


@learner("buggy", names=["missing-output-projection"])
def no_w_o(i, d):
    return _run(i, d, w_o=False)


@learner("buggy", names=["softmax-wrong-dim"])
def softmax_dim_minus_2(i, d):
    return _run(i, d, axis=-2)


@learner("buggy", names=["scale-by-d-model", "merge-no-transpose"], note="two bugs: √d_model and merge by reshape")
def two_bugs_scale_merge(i, d):
    return _run(i, d, scale=math.sqrt(i["X"].shape[-1]), merge="reshape")


@learner("buggy", names=["heads-no-transpose"], note="view(B, n, h, d_h) kept, heads attend across each token")
def heads_not_transposed(i, d):
    X = i["X"]
    B, n, D = X.shape
    h = d["heads"]
    dh = D // h
    Q, K, V = (X @ i[w] for w in ("W_Q", "W_K", "W_V"))
    q, k, v = (t.reshape(B, n, h, dh) for t in (Q, K, V))
    s = q @ k.transpose(0, 1, 3, 2)
    w = softmax(s / np.sqrt(dh))
    ho = w @ v
    merged = ho.reshape(B, n, D)
    return dict(Q=Q, K=K, V=V, Q_heads=q, scores=s, weights=w, merged=merged, output=merged @ i["W_O"])
