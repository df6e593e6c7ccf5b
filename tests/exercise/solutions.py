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
    Q = inp["X"] @ inp["W_Q"]
    K, V = inp["memory"] @ inp["W_K"], inp["memory"] @ inp["W_V"]
    scores = Q @ K.T
    weights = softmax(scores * scale_of(bug, Q.shape[1], inp["X"].shape[1]),
                      axis=0 if bug == "softmax-wrong-dim" else -1)
    return {"Q": Q, "K": K, "V": V, "scores": scores, "weights": weights, "output": weights @ V}


def kv_decode(inp, bug, p):
    X = inp["X"]
    Q, K, V = X @ inp["W_Q"], X @ inp["W_K"], X @ inp["W_V"]
    s = scale_of(bug, Q.shape[1], X.shape[1])
    sc = (Q[:p] @ K[:p].T) * s
    sc[np.triu(np.ones((p, p), dtype=bool), k=1)] = -np.inf
    outs = [softmax(sc) @ V[:p]]
    K_cache, V_cache = K[:p], V[:p]
    for t in range(p, X.shape[0]):
        if bug == "kv-cache-wrong-order":
            K_cache, V_cache = np.concatenate([K[t:t + 1], K_cache]), np.concatenate([V[t:t + 1], V_cache])
        else:
            K_cache, V_cache = np.concatenate([K_cache, K[t:t + 1]]), np.concatenate([V_cache, V[t:t + 1]])
        outs.append(softmax((Q[t:t + 1] @ K_cache.T) * s) @ V_cache)
    return {"K_cache": K_cache, "V_cache": V_cache, "output": np.concatenate(outs)}


def softmax_ex(inp, bug):
    s = inp["scores"]
    if bug == "no-max-subtraction":
        return {"weights": softmax(s, stable=False, nan_rows=True)}
    if bug == "softmax-wrong-dim":
        return {"weights": softmax(s, axis=0)}
    return {"weights": softmax(s, nan_rows=bug == "all-masked-row")}


def online(inp, bug, block):
    X = inp["X"]
    Q, K, V = X @ inp["W_Q"], X @ inp["W_K"], X @ inp["W_V"]
    s = scale_of(bug, Q.shape[1], X.shape[1])
    n = Q.shape[0]
    m, l, acc = np.full(n, -np.inf), np.zeros(n), np.zeros((n, V.shape[1]))
    for j in range(0, K.shape[0], block):
        S = (Q @ K[j:j + block].T) * s
        m_new = np.maximum(m, S.max(axis=1))
        P = np.exp(S - m_new[:, None])
        alpha = np.exp(m - m_new)
        l = alpha * l + P.sum(axis=1)
        acc = alpha[:, None] * acc + P @ V[j:j + block]
        m = m_new
    return {"m": m, "l": l, "output": acc / l[:, None]}


def backward(inp, bug):
    X, W_Q, W_K, W_V, dO = inp["X"], inp["W_Q"], inp["W_K"], inp["W_V"], inp["d_output"]
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    d_k = Q.shape[1]
    P = softmax(Q @ K.T / np.sqrt(d_k))
    d_V = P.T @ dO
    d_P = dO @ V.T
    d_S = P * d_P if bug == "softmax-backward-no-rowsum" else P * (d_P - (P * d_P).sum(axis=1, keepdims=True))
    s = 1.0 if bug == "backward-no-scale" else 1.0 / np.sqrt(d_k)
    d_Q, d_K = d_S @ K * s, d_S.T @ Q * s
    return {"d_V": d_V, "d_P": d_P, "d_S": d_S, "d_Q": d_Q, "d_K": d_K, "d_W_Q": X.T @ d_Q, "d_W_K": X.T @ d_K,
            "d_W_V": X.T @ d_V, "d_X": d_Q @ W_Q.T + d_K @ W_K.T + d_V @ W_V.T}


def config_int(folder, key):
    for line in open(os.path.join(folder, "exercise.toml")):
        if line.strip().startswith(key + " ="):
            return int(line.split("=")[1])
    raise KeyError(key)


def main():
    folder, ex, bug = sys.argv[1], sys.argv[2], sys.argv[3]
    inp = {f[:-4]: np.load(os.path.join(folder, "inputs", f)) for f in os.listdir(os.path.join(folder, "inputs"))}
    if ex in ("sdpa", "causal"):
        out = single(inp, bug, ex == "causal")
    elif ex == "padding":
        out = padding(inp, bug)
    elif ex == "mha":
        out = heads(inp, bug, config_int(folder, "heads"))
    elif ex == "gqa":
        out = heads(inp, bug, config_int(folder, "heads"), config_int(folder, "kv_heads"))
    elif ex == "cross":
        out = cross(inp, bug)
    elif ex == "kv-decode":
        out = kv_decode(inp, bug, config_int(folder, "prompt_len"))
    elif ex == "softmax":
        out = softmax_ex(inp, bug)
    elif ex == "online-softmax":
        out = online(inp, bug, config_int(folder, "block_k"))
    else:
        out = backward(inp, bug)
    if len(sys.argv) > 4 and sys.argv[4] == "npz":
        np.savez_compressed(os.path.join(folder, "answer.npz"), **out)
        return
    os.makedirs(os.path.join(folder, "answer"), exist_ok=True)
    for name, value in out.items():
        np.save(os.path.join(folder, "answer", name + ".npy"), np.asarray(value))


if __name__ == "__main__":
    main()
