#!/usr/bin/env python3
"""A learner's NumPy solutions of every `attn-explain exercise`, right or with one classic bug.

    /usr/bin/python3 tests/exercise/solutions.py DIR ID BUG [npz]

reads DIR/inputs/*.npy and writes DIR/answer/<id>.npy (or DIR/answer.npz with `npz`), computed
as a learner would, with BUG = "correct" or a mistake id. Used by tests/test_exercise.cpp.
"""
import os
import sys

import numpy as np


def softmax(s, axis=-1, stable=True, nan_rows=False):
    m = np.max(s, axis=axis, keepdims=True) if stable else 0.0
    with np.errstate(all="ignore"):
        e = np.exp(s - m)
        w = e / np.sum(e, axis=axis, keepdims=True)
    if not nan_rows:
        w = np.nan_to_num(w, nan=0.0)
    return w


def scale_of(bug, d_k, d_model):
    return {"no-scale": 1.0, "scale-by-d-k": 1.0 / d_k, "scale-by-d-model": 1.0 / np.sqrt(d_model)}.get(
        bug, 1.0 / np.sqrt(d_k))


def single(inp, bug, causal):
    X, W_Q, W_K, W_V = inp["X"], inp["W_Q"], inp["W_K"], inp["W_V"]
    Q = X @ (W_Q.T if bug == "linear-weight-layout" else W_Q)
    K, V = X @ W_K, X @ W_V
    n, d_k = Q.shape
    scores = Q @ K if bug == "no-transpose" else Q @ K.T
    scaled = scores * scale_of(bug, d_k, X.shape[1])
    out = {"Q": Q, "K": K, "V": V, "scores": scores, "scaled_scores": scaled}
    future = np.triu(np.ones((n, n), dtype=bool), k=1)
    masked = scaled.copy()
    if causal:
        if bug == "mask-after-softmax":
            p = softmax(scaled)
            weights = softmax(np.where(future, -np.inf, p))
            out.update(masked_scores=scaled, weights=weights, output=weights @ V)
            return out
        if bug == "mask-fill-zero":
            masked[future] = 0
        elif bug == "mask-tiny-value":
            masked[future] = -1e-9
        elif bug == "mask-inverted":
            masked[~future] = -np.inf
        elif bug == "causal-wrong-diagonal":
            masked[np.triu(np.ones((n, n), dtype=bool), k=0)] = -np.inf
        else:
            masked[future] = -np.inf
        out["masked_scores"] = masked
    nan_rows = bug in ("causal-wrong-diagonal", "mask-inverted")
    weights = softmax(masked, axis=0 if bug == "softmax-wrong-dim" else -1, nan_rows=nan_rows)
    out.update(weights=weights, output=weights @ V)
    return out


def padding(inp, bug):
    X, lengths = inp["X"], inp["lengths"]
    Q, K, V = X @ inp["W_Q"], X @ inp["W_K"], X @ inp["W_V"]
    B, n, _ = X.shape
    scores = Q @ K.transpose(0, 2, 1)
    scaled = scores * scale_of(bug, Q.shape[-1], X.shape[-1])
    pad = np.arange(n)[None, :] >= lengths[:, None]  # (B, n): True = padding
    if bug == "padding-on-queries":
        masked = np.where(pad[:, :, None], -np.inf, scaled)
    else:
        masked = np.where(pad[:, None, :], -np.inf, scaled)
    weights = softmax(masked, nan_rows=bug in ("all-masked-row", "padding-on-queries"))
    return {"scores": scores, "masked_scores": masked, "weights": weights, "output": weights @ V}


def heads(inp, bug, h, g=None):
    X = inp["X"]
    B, n, d = X.shape
    d_h = d // h
    g = g or h
    Q, K, V = X @ inp["W_Q"], X @ inp["W_K"], X @ inp["W_V"]
    if bug == "heads-no-transpose":
        Qh, Kh, Vh = Q.reshape(B, n, h, d_h), K.reshape(B, n, g, d_h), V.reshape(B, n, g, d_h)
    else:
        Qh = Q.reshape(B, n, h, d_h).transpose(0, 2, 1, 3)
        Kh = K.reshape(B, n, g, d_h).transpose(0, 2, 1, 3)
        Vh = V.reshape(B, n, g, d_h).transpose(0, 2, 1, 3)
    if bug == "gqa-tile-not-interleave":  # heads 0, 1, 0, 1 where 0, 0, 1, 1 was meant
        Kr, Vr = np.tile(Kh, (1, h // g, 1, 1)), np.tile(Vh, (1, h // g, 1, 1))
    else:
        Kr, Vr = np.repeat(Kh, h // g, axis=1), np.repeat(Vh, h // g, axis=1)
    scores = Qh @ Kr.transpose(0, 1, 3, 2)
    scaled = scores * scale_of(bug, d_h, d)
    weights = softmax(scaled, axis=-2 if bug == "softmax-wrong-dim" else -1)
    heads_output = weights @ Vr
    if bug in ("heads-no-transpose", "merge-no-transpose"):
        merged = heads_output.reshape(B, n, h * d_h)
    else:
        merged = heads_output.transpose(0, 2, 1, 3).reshape(B, n, h * d_h)
    out = {"Q_heads": Qh, "K_heads": Kh, "V_heads": Vh, "scores": scores, "weights": weights}
    if "W_O" in inp:
        out.update(Q=Q, K=K, V=V, scaled_scores=scaled, heads_output=heads_output, merged=merged,
                   output=merged if bug == "missing-output-projection" else merged @ inp["W_O"])
    else:
        out["output"] = merged
    return out


def cross(inp, bug):
    q_src, kv_src = (inp["memory"], inp["X"]) if bug == "cross-sources-swapped" else (inp["X"], inp["memory"])
    Q = q_src @ inp["W_Q"]
    K, V = kv_src @ inp["W_K"], kv_src @ inp["W_V"]
    scores = Q @ K.T
    weights = softmax(scores * scale_of(bug, Q.shape[1], inp["X"].shape[1]),
                      axis=0 if bug == "softmax-wrong-dim" else -1)
    return {"Q": Q, "K": K, "V": V, "scores": scores, "weights": weights, "output": weights @ V}


def kv_decode(inp, bug, p, window=None):
    """Prefill, then one token at a time; the cache after the prefill and after each step."""
    X = inp["X"]
    Q, K, V = X @ inp["W_Q"], X @ inp["W_K"], X @ inp["W_V"]
    total = X.shape[0]
    s = scale_of(bug, Q.shape[1], X.shape[1])
    W = None if window is None else window + (1 if bug == "kv-window-off-by-one" else 0)
    sc = (Q[:p] @ K[:p].T) * s
    blocked = np.triu(np.ones((p, p), dtype=bool), k=1)
    if W is not None:
        blocked |= np.tril(np.ones((p, p), dtype=bool), k=-W)
    sc[blocked] = -np.inf
    outs = [softmax(sc) @ V[:p]]
    first = 0 if W is None else max(0, p - W)
    K_cache, V_cache, pos = K[first:p], V[first:p], list(range(first, p))
    snaps = []

    def snap():
        order = np.argsort(pos) if window is not None else np.arange(len(pos))  # the window's driver sorts
        k, v = K_cache[order], V_cache[order]
        snaps.append((np.pad(k, ((0, total - len(k)), (0, 0))), np.pad(v, ((0, total - len(v)), (0, 0))), len(k),
                      np.pad(np.array(pos, dtype=np.int64)[order], (0, total - len(k)), constant_values=-1)))

    snap()
    for t in range(p, total):
        if bug == "kv-cache-not-appended":
            outs.append(softmax((Q[t:t + 1] @ np.concatenate([K_cache, K[t:t + 1]]).T) * s)
                        @ np.concatenate([V_cache, V[t:t + 1]]))
            snap()
            continue
        if bug == "kv-cache-wrong-order":
            K_cache, V_cache = np.concatenate([K[t:t + 1], K_cache]), np.concatenate([V[t:t + 1], V_cache])
            pos = [t] + pos
        else:
            K_cache, V_cache = np.concatenate([K_cache, K[t:t + 1]]), np.concatenate([V_cache, V[t:t + 1]])
            pos = pos + [t]
        if W is not None and len(K_cache) > W:
            K_cache, V_cache, pos = K_cache[1:], V_cache[1:], pos[1:]
        outs.append(softmax((Q[t:t + 1] @ K_cache.T) * s) @ V_cache)
        snap()
    out = {"K_cache_steps": np.stack([x[0] for x in snaps]), "V_cache_steps": np.stack([x[1] for x in snaps]),
           "cache_len": np.array([x[2] for x in snaps], dtype=np.int64), "output": np.concatenate(outs)}
    if window is not None:
        out["cache_positions"] = np.stack([x[3] for x in snaps])
    return out


def kv_decode_v1(inp, bug, p):
    """Rubric 1 (a folder made before the cases): only the final cache."""
    out = kv_decode(inp, bug, p)
    n = int(out["cache_len"][-1])
    return {"K_cache": out["K_cache_steps"][-1][:n], "V_cache": out["V_cache_steps"][-1][:n], "output": out["output"]}


def softmax_ex(inp, bug):
    s = inp["scores"]
    if bug == "no-max-subtraction":
        return {"weights": softmax(s, stable=False, nan_rows=True)}
    if bug == "softmax-wrong-dim":
        return {"weights": softmax(s, axis=0)}
    return {"weights": softmax(s, nan_rows=bug == "all-masked-row")}


def online(inp, bug, block, fa1=False):
    X = inp["X"]
    Q, K, V = X @ inp["W_Q"], X @ inp["W_K"], X @ inp["W_V"]
    s = scale_of(bug, Q.shape[1], X.shape[1])
    n = Q.shape[0]
    m, l, acc = np.full(n, -np.inf), np.zeros(n), np.zeros((n, V.shape[1]))
    ms, ls, accs = [], [], []
    for j in range(0, K.shape[0], block):
        S = (Q @ K[j:j + block].T) * s
        m_new = np.maximum(m, S.max(axis=1))
        P = np.exp(S - m_new[:, None])
        alpha = np.exp(m - m_new)
        l_new = (l if bug == "online-softmax-sum-not-rescaled" else alpha * l) + P.sum(axis=1)
        if fa1:
            acc = ((alpha * l)[:, None] * acc + P @ V[j:j + block]) / l_new[:, None]
        else:
            f = np.ones_like(alpha) if bug == "online-softmax-acc-wrong-rescale" else alpha
            acc = f[:, None] * acc + P @ V[j:j + block]
        m, l = m_new, l_new
        ms.append(m), ls.append(l), accs.append(acc)
    return {"m_steps": np.stack(ms), "l_steps": np.stack(ls), "acc_steps": np.stack(accs),
            "output": acc if fa1 else acc / l[:, None]}


def online_v1(inp, bug):
    """Rubric 1: the final m and l, from the whole rows at once."""
    X = inp["X"]
    Q, K, V = X @ inp["W_Q"], X @ inp["W_K"], X @ inp["W_V"]
    S = (Q @ K.T) * scale_of(bug, Q.shape[1], X.shape[1])
    m = S.max(axis=1)
    l = np.exp(S - m[:, None]).sum(axis=1)
    return {"m": m, "l": l, "output": softmax(S) @ V}


def backward(inp, bug):
    X, W_Q, W_K, W_V, dO = inp["X"], inp["W_Q"], inp["W_K"], inp["W_V"], inp["d_output"]
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    d_k = Q.shape[1]
    P = softmax(Q @ K.T / np.sqrt(d_k))
    d_V = P.T @ dO
    d_P = dO @ V.T
    d_S = P * d_P if bug == "softmax-backward-no-rowsum" else P * (d_P - (P * d_P).sum(axis=1, keepdims=True))
    s = 1.0 if bug == "backward-no-scale" else 1.0 / np.sqrt(d_k)
    d_Q, d_K = (d_S.T if bug == "backward-transposed-grad" else d_S) @ K * s, d_S.T @ Q * s
    return {"d_V": d_V, "d_P": d_P, "d_S": d_S, "d_Q": d_Q, "d_K": d_K, "d_W_Q": X.T @ d_Q, "d_W_K": X.T @ d_K,
            "d_W_V": X.T @ d_V, "d_X": d_Q @ W_Q.T + d_K @ W_K.T + d_V @ W_V.T}


def rope(inp, bug, style):
    """RoPE by hand: q and k rotated at their positions, then the scores."""
    Q, K, base = inp["Q"].astype(np.float64), inp["K"].astype(np.float64), float(inp["base"])
    qp, kp = inp["q_positions"].astype(np.float64), inp["k_positions"].astype(np.float64)
    d = Q.shape[1]
    if bug == "rope-wrong-base":
        base = 10000.0
    inv_freq = 1.0 / base ** (np.arange(0, d, 2) / d)
    if bug == "rope-wrong-position":
        qp = np.arange(len(qp), dtype=np.float64)  # the index in the chunk, not the position
    if bug == "rope-style-mismatch":
        style = "half" if style == "interleaved" else "interleaved"
    sign = -1.0 if bug == "rope-rotation-sign" else 1.0

    def rotate(x, pos):
        ang = pos[:, None] * inv_freq[None, :]
        cos, sin = np.cos(ang), sign * np.sin(ang)
        if style == "half":
            x1, x2 = x[:, :d // 2], x[:, d // 2:]
            return np.concatenate([x1 * cos - x2 * sin, x1 * sin + x2 * cos], axis=1)
        out = x.copy()
        out[:, 0::2], out[:, 1::2] = x[:, 0::2] * cos - x[:, 1::2] * sin, x[:, 0::2] * sin + x[:, 1::2] * cos
        return out

    Q_rot, K_rot = rotate(Q, qp), rotate(K, kp)
    scores = Q_rot @ K_rot.T
    return {"Q_rot": Q_rot, "K_rot": K_rot, "scores": scores, "scaled_scores": scores / np.sqrt(d)}


def read_config(folder):
    import tomllib
    with open(os.path.join(folder, "exercise.toml"), "rb") as f:
        return tomllib.load(f)


def solve_case(folder, ex, bug, dims, rubric):
    inp = {f[:-4]: np.load(os.path.join(folder, "inputs", f)) for f in os.listdir(os.path.join(folder, "inputs"))}
    if ex in ("sdpa", "causal"):
        return single(inp, bug, ex == "causal")
    if ex == "padding":
        return padding(inp, bug)
    if ex == "mha":
        return heads(inp, bug, dims["heads"])
    if ex == "gqa":
        return heads(inp, bug, dims["heads"], dims["kv_heads"])
    if ex == "cross":
        return cross(inp, bug)
    if ex == "kv-decode":
        return kv_decode(inp, bug, dims["prompt_len"]) if rubric >= 2 else kv_decode_v1(inp, bug, dims["prompt_len"])
    if ex == "kv-decode-window":
        return kv_decode(inp, bug, dims["prompt_len"], dims["window"])
    if ex == "softmax":
        return softmax_ex(inp, bug)
    if ex == "rope":
        return rope(inp, bug, dims["rope_style"])
    if ex == "online-softmax":
        if rubric < 2:
            return online_v1(inp, bug)
        return online(inp, "correct" if bug == "correct-fa1" else bug, dims["block_k"], fa1=bug == "correct-fa1")
    return backward(inp, bug)


def main():
    folder, ex, bug = sys.argv[1], sys.argv[2], sys.argv[3]
    npz = len(sys.argv) > 4 and sys.argv[4] == "npz"
    cfg = read_config(folder)
    rubric = cfg.get("rubric", 1)
    cases = [(folder, cfg["config"])]
    for k, dims in sorted(cfg.get("cases", {}).items()):
        cases.append((os.path.join(folder, "cases", k), dims))
    for where, dims in cases:
        out = solve_case(where, ex, bug, dims, rubric)
        if npz:
            np.savez_compressed(os.path.join(where, "answer.npz"), **out)
            continue
        os.makedirs(os.path.join(where, "answer"), exist_ok=True)
        for name, value in out.items():
            np.save(os.path.join(where, "answer", name + ".npy"), np.asarray(value))


if __name__ == "__main__":
    main()
