#!/usr/bin/env python3
"""NumPy attention at n = 4096, d = 64, float32: the textbook version and a tiled (online-softmax) one.

Prints one line per version: "<name> <best ms>" (best of --runs). Used by tests/bench/kernel_speed.sh
as the baseline for `attn-explain bench`. Run with Debian's /usr/bin/python3 (numpy 1.24).
"""
import argparse
import time

import numpy as np


def textbook(q, k, v):
    d = q.shape[1]
    scores = q @ k.T / np.sqrt(np.float32(d))          # n × n, materialised
    scores -= scores.max(axis=1, keepdims=True)         # max subtraction, for stability
    p = np.exp(scores)
    p /= p.sum(axis=1, keepdims=True)
    return p @ v


def tiled(q, k, v, br=512, bc=512):
    n, d = q.shape
    scale = np.float32(1.0 / np.sqrt(d))
    out = np.empty_like(q)
    for i0 in range(0, n, br):
        qb = q[i0:i0 + br] * scale
        m = np.full((qb.shape[0], 1), -np.inf, dtype=np.float32)   # running max
        l = np.zeros((qb.shape[0], 1), dtype=np.float32)          # running sum
        acc = np.zeros((qb.shape[0], d), dtype=np.float32)
        for j0 in range(0, n, bc):
            s = qb @ k[j0:j0 + bc].T
            m_new = np.maximum(m, s.max(axis=1, keepdims=True))
            alpha = np.exp(m - m_new)                              # α = exp(m_old − m_new)
            p = np.exp(s - m_new)
            l = alpha * l + p.sum(axis=1, keepdims=True)
            acc = alpha * acc + p @ v[j0:j0 + bc]
            m = m_new
        out[i0:i0 + br] = acc / l
    return out


def best_ms(fn, args, runs):
    fn(*args)  # warm-up
    best = float("inf")
    for _ in range(runs):
        t0 = time.perf_counter()
        fn(*args)
        best = min(best, time.perf_counter() - t0)
    return best * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--d", type=int, default=64)
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((a.n, a.d), dtype=np.float32) for _ in range(3))
    diff = float(np.abs(textbook(q, k, v) - tiled(q, k, v)).max())
    print(f"numpy_textbook {best_ms(textbook, (q, k, v), a.runs):.2f}")
    print(f"numpy_tiled {best_ms(tiled, (q, k, v), a.runs):.2f}")
    print(f"numpy_max_diff {diff:.2e}")


if __name__ == "__main__":
    main()
