"""kv-decode-window: KV-cache decoding with a sliding window of W keys, as learners write it."""
import math

import numpy as np

from common import learner, softmax


def _prefill(Q, K, V, W, dk, reach=0, scale=True):
    """Windowed causal attention over the prompt: query i reads keys i - W + 1 .. i (reach: more)."""
    p = Q.shape[0]
    s = Q @ K.T / (math.sqrt(dk) if scale else 1.0)
    i, j = np.indices((p, p))
    s = np.where((j > i) | (j <= i - W - reach), -np.inf, s)
    return softmax(s) @ V


def _save(snaps, total, K, V):
    """The cache after the prefill and after each step, in position order, padded to total rows."""
    ks, vs, lens, poss = [], [], [], []
    for pos in snaps:
        pos = sorted(pos)
        k = np.zeros((total, K.shape[1]), dtype=K.dtype)
        v = np.zeros((total, V.shape[1]), dtype=V.dtype)
        k[:len(pos)], v[:len(pos)] = K[pos], V[pos]
        ks.append(k), vs.append(v), lens.append(len(pos))
        poss.append(np.array(pos + [-1] * (total - len(pos)), dtype=np.int64))
    return {"K_cache_steps": np.stack(ks), "V_cache_steps": np.stack(vs), "cache_len": np.array(lens, dtype=np.int64),
            "cache_positions": np.stack(poss)}


def _shift_left(i, d, keep=None, attend_new=False, prefill_reach=0, scale=True, f64=False):
    """A list of positions shifted left: append, then drop the oldest while more than `keep` (W)."""
    X, WQ, WK, WV = (i[k].astype(np.float64) if f64 else i[k] for k in ("X", "W_Q", "W_K", "W_V"))
    p, W, dk = d["prompt_len"], d["window"], d["d_k"]
    keep = W if keep is None else keep
    Q, K, V = X @ WQ, X @ WK, X @ WV
    outs = [_prefill(Q[:p], K[:p], V[:p], W, dk, reach=prefill_reach, scale=scale)]
    cache = list(range(max(0, p - keep), p))
    snaps = [list(cache)]
    for t in range(p, X.shape[0]):
        if attend_new:  # reads the cache and the new token, then stores it
            keys = cache + [t]
            cache = (cache + [t])[-keep:]
        else:
            cache.append(t)
            while len(cache) > keep:
                cache.pop(0)
            keys = cache
        s = Q[t] @ K[keys].T / (math.sqrt(dk) if scale else 1.0)
        outs.append((softmax(s[None, :]) @ V[keys]))
        snaps.append(list(cache))
    out = _save(snaps, X.shape[0], K, V)
    out["output"] = np.vstack(outs)
    return out


@learner("correct")
def shift_left(i, d):
    return _shift_left(i, d)


@learner("correct")
def ring_buffer_float64(i, d):
    """Slots written at t % W; positions kept beside them; the driver saves them in position order."""
    X = i["X"].astype(np.float64)
    p, W, dk = d["prompt_len"], d["window"], d["d_k"]
    Q, K, V = X @ i["W_Q"], X @ i["W_K"], X @ i["W_V"]
    Kc, Vc = np.zeros((W, dk)), np.zeros((W, V.shape[1]))
    slot_pos = np.full(W, -1)
    outs = [_prefill(Q[:p], K[:p], V[:p], W, dk)]
    for t in range(max(0, p - W), p):
        Kc[t % W], Vc[t % W], slot_pos[t % W] = K[t], V[t], t
    snaps = [[int(x) for x in slot_pos if x >= 0]]
    for t in range(p, X.shape[0]):
        Kc[t % W], Vc[t % W], slot_pos[t % W] = K[t], V[t], t
        used = slot_pos >= 0
        w = softmax((Q[t] @ Kc[used].T / np.sqrt(dk))[None, :])
        outs.append(w @ Vc[used])
        snaps.append([int(x) for x in slot_pos if x >= 0])
    out = _save(snaps, X.shape[0], K, V)
    out["output"] = np.vstack(outs)
    return out


@learner("buggy", names=["kv-window-off-by-one"], note="keys i - W .. i: W + 1 of them, cache and prefill",
         strict=True)
def window_plus_one(i, d):
    return _shift_left(i, d, keep=d["window"] + 1, prefill_reach=1)


@learner("buggy", names=["kv-window-off-by-one"], note="prefill mask j < i - W: one key too many there",
         strict=True)
def prefill_mask_off_by_one(i, d):
    return _shift_left(i, d, prefill_reach=1)


@learner("buggy", names=["kv-window-off-by-one"], note="the cache keeps W - 1, the new token makes W", strict=True)
def cache_keeps_w_minus_one(i, d):
    return _shift_left(i, d, keep=d["window"] - 1, attend_new=True) if d["window"] > 1 else None


@learner("buggy", note="never evicts: the cache grows past W")
def no_eviction(i, d):
    return _shift_left(i, d, keep=10 ** 9)


@learner("buggy", names=["no-scale"], note="decode and prefill unscaled")
def no_scale(i, d):
    return _shift_left(i, d, scale=False)
