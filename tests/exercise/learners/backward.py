"""backward: attention backward by hand, as learners write it."""
import math

import numpy as np

from common import learner, softmax


def _run(i, d, scale=True, dk_form="right", dq_form="right", rowsum=True, dv_form="right", keepdims=True, f64=False):
    X, WQ, WK, WV, dO = (i[k].astype(np.float64) if f64 else i[k] for k in ("X", "W_Q", "W_K", "W_V", "d_output"))
    Q, K, V = X @ WQ, X @ WK, X @ WV
    c = 1 / math.sqrt(d["d_k"])
    P = softmax(Q @ K.T * c)
    dV = P.T @ dO if dv_form == "right" else P @ dO
    dP = dO @ V.T
    if rowsum:
        dS = P * (dP - (dP * P).sum(-1, keepdims=keepdims))
    else:
        dS = P * dP
    s = c if scale else 1.0
    dQ = (dS @ K if dq_form == "right" else dS.T @ K) * s
    dK = (dS.T @ Q if dk_form == "right" else dS @ Q) * s
    return dict(d_V=dV, d_P=dP, d_S=dS, d_Q=dQ, d_K=dK, d_W_Q=X.T @ dQ, d_W_K=X.T @ dK, d_W_V=X.T @ dV,
                d_X=dQ @ WQ.T + dK @ WK.T + dV @ WV.T)


@learner("correct")
def by_hand(i, d):
    return _run(i, d)


@learner("correct")
def float64_required_only(i, d):
    r = _run(i, d, f64=True)
    return {k: r[k] for k in ("d_Q", "d_K", "d_V")}


@learner("correct")
def torch_by_hand(i, d):
    import torch
    X, WQ, WK, WV, dO = (torch.from_numpy(i[k]) for k in ("X", "W_Q", "W_K", "W_V", "d_output"))
    Q, K, V = X @ WQ, X @ WK, X @ WV
    P = torch.softmax(Q @ K.T / math.sqrt(d["d_k"]), dim=-1)
    dP = dO @ V.T
    dS = P * (dP - (dP * P).sum(dim=-1, keepdim=True))
    return {"d_V": P.T @ dO, "d_P": dP, "d_S": dS, "d_Q": dS @ K / math.sqrt(d["d_k"]),
            "d_K": dS.T @ Q / math.sqrt(d["d_k"])}


@learner("buggy", names=["backward-no-scale"])
def no_scale(i, d):
    return _run(i, d, scale=False)


@learner("buggy", names=["backward-transposed-grad"], strict=True)
def dk_without_transpose(i, d):
    return _run(i, d, dk_form="wrong")


@learner("buggy", names=["backward-transposed-grad"], strict=True)
def dq_with_transpose(i, d):
    return _run(i, d, dq_form="wrong")


@learner("buggy", names=["softmax-backward-no-rowsum"])
def no_rowsum(i, d):
    return _run(i, d, rowsum=False)


@learner("buggy", note="d_V = P @ d_output")
def dv_not_transposed(i, d):
    return _run(i, d, dv_form="wrong")


@learner("buggy", note="row sum without keepdims")
def rowsum_no_keepdims(i, d):
    return _run(i, d, keepdims=False)


@learner("buggy", names=["backward-no-scale"], note="required answers only")
def no_scale_required_only(i, d):
    r = _run(i, d, scale=False)
    return {k: r[k] for k in ("d_Q", "d_K", "d_V")}
