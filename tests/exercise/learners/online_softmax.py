"""online-softmax: tiled attention with a running max and sum, as learners write it."""
import math

import numpy as np

from common import learner, softmax


def _tiled(i, d, slip="none", normalised=False, f64=False):
    X, WQ, WK, WV = (i[k].astype(np.float64) if f64 else i[k] for k in ("X", "W_Q", "W_K", "W_V"))
    Q, K, V = X @ WQ, X @ WK, X @ WV
    n, B = Q.shape[0], d["block_k"]
    S = Q @ K.T / math.sqrt(d["d_k"])
    m = np.full(n, -np.inf, dtype=S.dtype)
    l = np.zeros(n, dtype=S.dtype)
    acc = np.zeros((n, V.shape[1]), dtype=S.dtype)
    ms, ls, accs = [], [], []  # the state after every tile
    for j0 in range(0, K.shape[0], B):
        s = S[:, j0:j0 + B]
        m_new = np.maximum(m, s.max(axis=1))
        alpha = np.where(np.isfinite(m), np.exp(m - m_new), 0.0)
        p = np.exp(s - m_new[:, None])
        if slip in ("sum", "both"):
            l = np.where(np.isfinite(m), l, 0.0) + p.sum(axis=1)
        else:
            l_old = l
            l = alpha * l + p.sum(axis=1)
        if normalised:  # FlashAttention-1: acc holds the normalised output so far
            acc = (acc * (alpha * l_old)[:, None] + p @ V[j0:j0 + B]) / l[:, None]
            m = m_new
            ms.append(m), ls.append(l), accs.append(acc)
            continue
        if slip in ("acc", "both"):
            acc = acc + p @ V[j0:j0 + B]
        elif slip == "inverted_unguarded":  # exp(m_new - m) is inf at the first tile: inf * 0 = nan
            with np.errstate(all="ignore"):
                acc = acc * np.exp(m_new - m)[:, None] + p @ V[j0:j0 + B]
        elif slip == "inverted":
            acc = acc * np.where(np.isfinite(m), np.exp(m_new - m), 0.0)[:, None] + p @ V[j0:j0 + B]
        else:
            acc = acc * alpha[:, None] + p @ V[j0:j0 + B]
        m = m_new
        ms.append(m), ls.append(l), accs.append(acc)
    out = acc if normalised else acc / l[:, None]
    return {"m_steps": np.stack(ms), "l_steps": np.stack(ls), "acc_steps": np.stack(accs), "output": out}


@learner("correct")
def flash2_style(i, d):
    return _tiled(i, d)


@learner("correct")
def flash1_normalised_float64(i, d):
    return _tiled(i, d, normalised=True, f64=True)


@learner("correct")
def untiled_prefix_states(i, d):
    """No running update: each tile's state recomputed from the whole prefix of keys."""
    X = i["X"]
    S = (X @ i["W_Q"]) @ (X @ i["W_K"]).T / np.sqrt(d["d_k"])
    V = X @ i["W_V"]
    ms, ls, accs = [], [], []
    for end in range(d["block_k"], S.shape[1] + d["block_k"], d["block_k"]):
        s = S[:, :end]
        m = s.max(axis=1)
        e = np.exp(s - m[:, None])
        ms.append(m), ls.append(e.sum(axis=1)), accs.append(e @ V[:end])
    return {"m_steps": np.stack(ms), "l_steps": np.stack(ls), "acc_steps": np.stack(accs),
            "output": softmax(S) @ V}


@learner("buggy", names=["online-softmax-sum-not-rescaled"], strict=True)
def sum_not_rescaled(i, d):
    return _tiled(i, d, slip="sum")


@learner("buggy", names=["online-softmax-acc-wrong-rescale"], strict=True)
def acc_not_rescaled(i, d):
    return _tiled(i, d, slip="acc")


@learner("buggy", names=["online-softmax-acc-wrong-rescale"], strict=True)
def acc_inverted_factor(i, d):
    return _tiled(i, d, slip="inverted")


@learner("buggy", names=["online-softmax-acc-wrong-rescale"], note="exp(m_new - m) unguarded: nan", strict=True)
def acc_inverted_unguarded(i, d):
    return _tiled(i, d, slip="inverted_unguarded")


@learner("buggy", names=["online-softmax-sum-not-rescaled", "online-softmax-acc-wrong-rescale"])
def neither_rescaled(i, d):
    return _tiled(i, d, slip="both")


@learner("buggy", names=["online-softmax-sum-not-rescaled"], note="output only", strict=True)
def sum_not_rescaled_output_only(i, d):
    return {"output": _tiled(i, d, slip="sum")["output"]}
