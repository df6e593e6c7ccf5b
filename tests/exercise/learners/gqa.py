"""gqa: grouped-query attention, as learners write it."""
import math

import numpy as np

from common import learner, softmax


def _run(i, d, expand="repeat_interleave", scale=None, axis=-1, raw_scores=True, f64=False):
    X, WQ, WK, WV = (i[k].astype(np.float64) if f64 else i[k] for k in ("X", "W_Q", "W_K", "W_V"))
    B, n, D = X.shape
    h, g = d["heads"], d["kv_heads"]
    dh = D // h
    Qh = (X @ WQ).reshape(B, n, h, dh).transpose(0, 2, 1, 3)
    Kh = (X @ WK).reshape(B, n, g, dh).transpose(0, 2, 1, 3)
    Vh = (X @ WV).reshape(B, n, g, dh).transpose(0, 2, 1, 3)
    if expand == "repeat_interleave":
        K2, V2 = np.repeat(Kh, h // g, axis=1), np.repeat(Vh, h // g, axis=1)
    else:  # np.tile, like torch's .repeat
        K2, V2 = np.tile(Kh, (1, h // g, 1, 1)), np.tile(Vh, (1, h // g, 1, 1))
    raw = Qh @ K2.transpose(0, 1, 3, 2)
    scaled = raw / (math.sqrt(dh) if scale is None else scale)
    w = softmax(scaled, axis=axis)
    out = (w @ V2).transpose(0, 2, 1, 3).reshape(B, n, h * dh)
    return dict(Q_heads=Qh, K_heads=Kh, V_heads=Vh, scores=raw if raw_scores else scaled, weights=w, output=out)


@learner("correct")
def numpy_repeat(i, d):
    return _run(i, d)


@learner("correct")
def float64_output_only(i, d):
    return {"output": _run(i, d, f64=True)["output"]}


@learner("correct")
def torch_repeat_interleave(i, d):
    import torch
    X, WQ, WK, WV = (torch.from_numpy(i[k]) for k in ("X", "W_Q", "W_K", "W_V"))
    B, n, D = X.shape
    h, g = d["heads"], d["kv_heads"]
    dh = D // h
    q = (X @ WQ).view(B, n, h, dh).transpose(1, 2)
    k = (X @ WK).view(B, n, g, dh).transpose(1, 2).repeat_interleave(h // g, dim=1)
    v = (X @ WV).view(B, n, g, dh).transpose(1, 2).repeat_interleave(h // g, dim=1)
    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(dh), dim=-1)
    return {"weights": w, "output": (w @ v).transpose(1, 2).reshape(B, n, D)}


@learner("correct")
def index_by_group(i, d):
    X = i["X"]
    B, n, D = X.shape
    h, g = d["heads"], d["kv_heads"]
    dh = D // h
    Q, K, V = X @ i["W_Q"], X @ i["W_K"], X @ i["W_V"]
    out = np.zeros((B, n, h * dh), dtype=X.dtype)
    for b in range(B):
        for head in range(h):
            kv = head // (h // g)
            q = Q[b, :, head * dh:(head + 1) * dh]
            k = K[b, :, kv * dh:(kv + 1) * dh]
            v = V[b, :, kv * dh:(kv + 1) * dh]
            out[b, :, head * dh:(head + 1) * dh] = softmax(q @ k.T / np.sqrt(dh)) @ v
    return {"output": out}


@learner("buggy", names=["gqa-tile-not-interleave"], strict=True)
def tile(i, d):
    return _run(i, d, expand="tile")


@learner("buggy", names=["gqa-tile-not-interleave"], note="torch .repeat, output only", strict=True)
def torch_repeat_output_only(i, d):
    import torch
    X, WQ, WK, WV = (torch.from_numpy(i[k]) for k in ("X", "W_Q", "W_K", "W_V"))
    B, n, D = X.shape
    h, g = d["heads"], d["kv_heads"]
    dh = D // h
    q = (X @ WQ).view(B, n, h, dh).transpose(1, 2)
    k = (X @ WK).view(B, n, g, dh).transpose(1, 2).repeat(1, h // g, 1, 1)
    v = (X @ WV).view(B, n, g, dh).transpose(1, 2).repeat(1, h // g, 1, 1)
    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(dh), dim=-1)
    return {"output": (w @ v).transpose(1, 2).reshape(B, n, D)}


@learner("buggy", names=["scale-by-d-model"])
def scale_d_model(i, d):
    return _run(i, d, scale=math.sqrt(i["X"].shape[-1]))


@learner("buggy", names=["no-scale"])
def no_scale(i, d):
    return _run(i, d, scale=1.0)


@learner("buggy", names=["softmax-wrong-dim"])
def softmax_dim_minus_2(i, d):
    return _run(i, d, axis=-2)
