"""kv-decode: KV-cache decoding, as learners write it."""
import math

import numpy as np

from common import learner, softmax


def _attend(q, K, V, dk, causal=False, scale=True):
    s = q @ K.T / (math.sqrt(dk) if scale else 1.0)
    if causal:
        n = s.shape[0]
        s = np.where(np.triu(np.ones((n, n), dtype=bool), 1), -np.inf, s)
    return softmax(s) @ V


def _steps(snaps, total):
    """The cache after the prefill and after each decode step, padded to the sequence length."""
    pad = lambda c: np.pad(c, ((0, total - len(c)), (0, 0)))  # noqa: E731
    return {"K_cache_steps": np.stack([pad(k) for k, _ in snaps]), "V_cache_steps": np.stack([pad(v) for _, v in snaps]),
            "cache_len": np.array([len(k) for k, _ in snaps], dtype=np.int64)}


def _run(i, d, order="append", prefill_causal=True, decode_scale=True, attend_before_append=False, f64=False):
    X, WQ, WK, WV = (i[k].astype(np.float64) if f64 else i[k] for k in ("X", "W_Q", "W_K", "W_V"))
    p, dk = d["prompt_len"], d["d_k"]
    Kc, Vc = X[:p] @ WK, X[:p] @ WV
    outs = [_attend(X[:p] @ WQ, Kc, Vc, dk, causal=prefill_causal)]
    snaps = [(Kc, Vc)]
    for t in range(p, X.shape[0]):
        x = X[t:t + 1]
        q, k, v = x @ WQ, x @ WK, x @ WV
        if order == "none":
            outs.append(_attend(q, np.vstack([Kc, k]), np.vstack([Vc, v]), dk))
            snaps.append((Kc, Vc))
            continue
        if attend_before_append:
            outs.append(_attend(q, Kc, Vc, dk, scale=decode_scale))
        if order == "prepend":
            Kc, Vc = np.vstack([k, Kc]), np.vstack([v, Vc])
        else:
            Kc, Vc = np.vstack([Kc, k]), np.vstack([Vc, v])
        if not attend_before_append:
            outs.append(_attend(q, Kc, Vc, dk, scale=decode_scale))
        snaps.append((Kc, Vc))
    out = _steps(snaps, X.shape[0])
    out["output"] = np.vstack(outs)
    return out


@learner("correct")
def append_rows(i, d):
    return _run(i, d)


@learner("correct")
def preallocated_float64(i, d):
    X = i["X"].astype(np.float64)
    n, p, dk = X.shape[0], d["prompt_len"], d["d_k"]
    K = np.zeros((n, dk))
    V = np.zeros((n, i["W_V"].shape[1]))
    out = np.zeros((n, V.shape[1]))
    K_steps, V_steps, lens = [], [], []
    for t in range(n):
        K[t], V[t] = X[t] @ i["W_K"], X[t] @ i["W_V"]
        if t >= p - 1:
            upto = t + 1
            if t == p - 1:
                for r in range(p):
                    out[r] = softmax((X[r] @ i["W_Q"]) @ K[:r + 1].T / np.sqrt(dk)) @ V[:r + 1]
            else:
                out[t] = softmax((X[t] @ i["W_Q"]) @ K[:upto].T / np.sqrt(dk)) @ V[:upto]
            K_steps.append(K.copy()), V_steps.append(V.copy()), lens.append(upto)
    return {"K_cache_steps": np.stack(K_steps), "V_cache_steps": np.stack(V_steps),
            "cache_len": np.array(lens, dtype=np.int64), "output": out}


@learner("buggy", names=["kv-cache-wrong-order"])
def prepend(i, d):
    return _run(i, d, order="prepend")


@learner("buggy", names=["kv-cache-not-appended"], strict=True)
def not_appended(i, d):
    return _run(i, d, order="none")


@learner("buggy", note="prefill without the causal mask")
def prefill_no_mask(i, d):
    return _run(i, d, prefill_causal=False)


@learner("buggy", note="decode steps unscaled")
def decode_no_scale(i, d):
    return _run(i, d, decode_scale=False)


@learner("buggy", note="attends before appending the new token")
def attend_before_append(i, d):
    return _run(i, d, attend_before_append=True)


@learner("buggy", names=["kv-cache-not-appended"], note="output only", strict=True)
def not_appended_output_only(i, d):
    return {"output": _run(i, d, order="none")["output"]}
