#!/usr/bin/env python3
"""Fills a starter of `attn-explain exercise` with a correct solution, as a learner would:

    /usr/bin/python3 tests/exercise/fill_starter.py FILE ID

replaces the body of every function of FILE (solution_numpy.py or solution_torch.py) that raises
NotImplementedError with a working one and leaves the driver as it is, so that running FILE
saves the answers of every case. The PyTorch starter gets torch tensors back; kv-decode-window
is solved with a ring buffer (the oldest slot overwritten in place), which the driver's position
order must accept. Used by tests/test_exercise.cpp.
"""
import re
import sys

HELPERS = '''
def _np(a):
    return a.detach().cpu().numpy().astype("float64") if hasattr(a, "detach") else np.asarray(a, dtype="float64")


def _out(a):
    return torch.from_numpy(np.ascontiguousarray(a)) if "torch" in globals() else a


def _softmax(s):
    m = s.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(s - m)
    d = e.sum(axis=-1, keepdims=True)
    return np.divide(e, d, out=np.zeros_like(e), where=d > 0)
'''

SOLVE = {
    "sdpa": '''
def solve(X, W_Q, W_K, W_V):
    X, W_Q, W_K, W_V = map(_np, (X, W_Q, W_K, W_V))
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    scores = Q @ K.T
    scaled = scores / np.sqrt(Q.shape[1])
    weights = _softmax(scaled)
    return {k: _out(v) for k, v in dict(Q=Q, K=K, V=V, scores=scores, scaled_scores=scaled, weights=weights,
                                        output=weights @ V).items()}
''',
    "causal": '''
def solve(X, W_Q, W_K, W_V):
    X, W_Q, W_K, W_V = map(_np, (X, W_Q, W_K, W_V))
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    scores = Q @ K.T
    scaled = scores / np.sqrt(Q.shape[1])
    n = len(X)
    masked = np.where(np.triu(np.ones((n, n), dtype=bool), 1), -np.inf, scaled)
    weights = _softmax(masked)
    return {k: _out(v) for k, v in dict(Q=Q, K=K, V=V, scores=scores, scaled_scores=scaled, masked_scores=masked,
                                        weights=weights, output=weights @ V).items()}
''',
    "padding": '''
def solve(X, W_Q, W_K, W_V, lengths):
    X, W_Q, W_K, W_V, lengths = map(_np, (X, W_Q, W_K, W_V, lengths))
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    scores = Q @ K.transpose(0, 2, 1)
    pad = np.arange(X.shape[1])[None, :] >= lengths[:, None]
    masked = np.where(pad[:, None, :], -np.inf, scores / np.sqrt(Q.shape[-1]))
    weights = _softmax(masked)
    return {k: _out(v) for k, v in dict(scores=scores, masked_scores=masked, weights=weights,
                                        output=weights @ V).items()}
''',
    "mha": '''
def solve(X, W_Q, W_K, W_V, W_O):
    X, W_Q, W_K, W_V, W_O = map(_np, (X, W_Q, W_K, W_V, W_O))
    B, n, d = X.shape
    h = case["heads"]
    split = lambda t: t.reshape(B, n, h, d // h).transpose(0, 2, 1, 3)
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    scores = split(Q) @ split(K).transpose(0, 1, 3, 2)
    weights = _softmax(scores / np.sqrt(d // h))
    heads_output = weights @ split(V)
    merged = heads_output.transpose(0, 2, 1, 3).reshape(B, n, d)
    return {"output": _out(merged @ W_O), "weights": _out(weights), "merged": _out(merged)}
''',
    "cross": '''
def solve(X, memory, W_Q, W_K, W_V):
    X, memory, W_Q, W_K, W_V = map(_np, (X, memory, W_Q, W_K, W_V))
    Q, K, V = X @ W_Q, memory @ W_K, memory @ W_V
    weights = _softmax(Q @ K.T / np.sqrt(Q.shape[1]))
    return {"Q": _out(Q), "scores": _out(Q @ K.T), "output": _out(weights @ V)}
''',
    "gqa": '''
def solve(X, W_Q, W_K, W_V):
    X, W_Q, W_K, W_V = map(_np, (X, W_Q, W_K, W_V))
    B, n, d = X.shape
    h, g = case["heads"], case["kv_heads"]
    dh = d // h
    Qh = (X @ W_Q).reshape(B, n, h, dh).transpose(0, 2, 1, 3)
    Kh = (X @ W_K).reshape(B, n, g, dh).transpose(0, 2, 1, 3)
    Vh = (X @ W_V).reshape(B, n, g, dh).transpose(0, 2, 1, 3)
    scores = Qh @ np.repeat(Kh, h // g, axis=1).transpose(0, 1, 3, 2)
    weights = _softmax(scores / np.sqrt(dh))
    out = (weights @ np.repeat(Vh, h // g, axis=1)).transpose(0, 2, 1, 3).reshape(B, n, d)
    return {"scores": _out(scores), "K_heads": _out(Kh), "output": _out(out)}
''',
    "softmax": '''
def solve(scores):
    return {"weights": _out(_softmax(_np(scores)))}
''',
    "backward": '''
def solve(X, W_Q, W_K, W_V, d_output):
    X, W_Q, W_K, W_V, dO = map(_np, (X, W_Q, W_K, W_V, d_output))
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    s = 1 / np.sqrt(Q.shape[1])
    P = _softmax(Q @ K.T * s)
    d_V, d_P = P.T @ dO, dO @ V.T
    d_S = P * (d_P - (P * d_P).sum(axis=1, keepdims=True))
    d_Q, d_K = d_S @ K * s, d_S.T @ Q * s
    return {k: _out(v) for k, v in dict(d_V=d_V, d_Q=d_Q, d_K=d_K, d_X=d_Q @ W_Q.T + d_K @ W_K.T + d_V @ W_V.T).items()}
''',
    "rope": '''
def solve(Q, K, q_positions, k_positions, base):
    Q, K, qp, kp = map(_np, (Q, K, q_positions, k_positions))
    d = Q.shape[1]
    inv_freq = 1.0 / float(_np(base)) ** (np.arange(0, d, 2) / d)

    def rope(x, pos):
        a = pos[:, None] * inv_freq
        c, s = np.cos(a), np.sin(a)
        if case["rope_style"] == "half":
            x1, x2 = x[:, :d // 2], x[:, d // 2:]
            return np.concatenate([x1 * c - x2 * s, x1 * s + x2 * c], axis=1)
        out = x.copy()
        out[:, 0::2], out[:, 1::2] = x[:, 0::2] * c - x[:, 1::2] * s, x[:, 0::2] * s + x[:, 1::2] * c
        return out

    Q_rot, K_rot = rope(Q, qp), rope(K, kp)
    scores = Q_rot @ K_rot.T
    return {k: _out(v) for k, v in dict(Q_rot=Q_rot, K_rot=K_rot, scores=scores,
                                        scaled_scores=scores / np.sqrt(d)).items()}
''',
}

ONLINE = '''
def project(X, W_Q, W_K, W_V):
    X, W_Q, W_K, W_V = map(_np, (X, W_Q, W_K, W_V))
    return _out(X @ W_Q), _out(X @ W_K), _out(X @ W_V)


def update(state, K_tile, V_tile):
    Q, K, V = _np(state["Q"]), _np(K_tile), _np(V_tile)
    m, l, acc = _np(state["m"]), _np(state["l"]), _np(state["acc"])
    S = Q @ K.T / np.sqrt(Q.shape[1])
    m_new = np.maximum(m, S.max(axis=1))
    P = np.exp(S - m_new[:, None])
    alpha = np.exp(m - m_new)
    return {"Q": state["Q"], "m": _out(m_new), "l": _out(alpha * l + P.sum(axis=1)),
            "acc": _out(alpha[:, None] * acc + P @ V)}


def finish(state):
    return _out(_np(state["acc"]) / _np(state["l"])[:, None])
'''

DECODE = '''
def _attend(q, K, V):
    return _softmax(q @ K.T / np.sqrt(q.shape[-1])) @ V


def prefill(cache, X_prompt):
    X = _np(X_prompt)
    Q, K, V = X @ _np(cache["W_Q"]), X @ _np(cache["W_K"]), X @ _np(cache["W_V"])
    p, W = len(X), cache.get("window")
    i, j = np.indices((p, p))
    blocked = (j > i) if W is None else (j > i) | (j <= i - W)
    S = np.where(blocked, -np.inf, Q @ K.T / np.sqrt(Q.shape[1]))
    out = _softmax(S) @ V
    first = 0 if W is None else max(0, p - W)
    cache["K"], cache["V"], cache["pos"], cache["next"] = K[first:], V[first:], list(range(first, p)), p
    if W is None:
        return _out(out), cache
    return _out(out), cache, list(cache["pos"])


def decode_step(cache, x_t):
    x = _np(x_t).reshape(1, -1)
    q, k, v = x @ _np(cache["W_Q"]), x @ _np(cache["W_K"]), x @ _np(cache["W_V"])
    W, t = cache.get("window"), cache["next"]
    K, V, pos = _np(cache["K"]), _np(cache["V"]), list(cache["pos"])
    if W is not None and len(pos) == W:  # a ring buffer: the oldest slot is overwritten in place
        slot = int(np.argmin(pos))
        K, V = K.copy(), V.copy()
        K[slot], V[slot], pos[slot] = k[0], v[0], t
    else:
        K, V, pos = np.concatenate([K, k]), np.concatenate([V, v]), pos + [t]
    cache["K"], cache["V"], cache["pos"], cache["next"] = K, V, pos, t + 1
    out = _attend(q, K, V)[0]
    if W is None:
        return _out(out), cache
    return _out(out), cache, list(pos)
'''


def replace_function(text, name, body):
    pattern = re.compile(r"^def " + name + r"\(.*?(?=^\S)", re.S | re.M)
    new, count = pattern.subn(lambda _: body.strip("\n") + "\n\n\n", text, count=1)
    if count != 1:
        sys.exit("fill_starter: no function %s() in the starter" % name)
    return new


def main():
    path, ex = sys.argv[1], sys.argv[2]
    text = open(path).read()
    if ex == "online-softmax":
        for name in ("project", "update", "finish"):
            text = replace_function(text, name, "")
        body = ONLINE
    elif ex in ("kv-decode", "kv-decode-window"):
        for name in ("prefill", "decode_step"):
            text = replace_function(text, name, "")
        body = DECODE
    else:
        text = replace_function(text, "solve", "")
        body = SOLVE[ex]
    at = text.index("\nif __name__ ==")
    text = text[:at] + HELPERS + body + "\n" + text[at:]
    with open(path, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
