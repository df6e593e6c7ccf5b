#!/usr/bin/python3
"""The degree-5 polynomial for 2^f, |f| <= 1/2, of lib/attn/core/kernels.cpp (exp2_avx2).

Fits the coefficients by iteratively reweighted least squares toward the least largest relative
error (a minimax fit), prints them and the largest relative error in exact arithmetic and
evaluated in float32 by Horner's rule as the kernel does. Run: /usr/bin/python3 tests/python/exp2_fit.py
"""
import numpy as np


def fit(degree=5, nodes=2000, rounds=60):
    f = np.cos(np.pi * (np.arange(nodes) + 0.5) / nodes) * 0.5  # Chebyshev nodes on [-1/2, 1/2]
    y = 2.0**f
    w = 1 / y
    for _ in range(rounds):
        a = np.vander(f, degree + 1, increasing=True) * w[:, None]
        c, *_ = np.linalg.lstsq(a, y * w, rcond=None)
        err = (np.polyval(c[::-1], f) - y) / y
        w = w * (np.abs(err) / np.abs(err).max() + 1e-3) ** 0.5
    return c, np.abs(err).max()


def float32_error(c):
    f = np.linspace(-0.5, 0.5, 200001).astype(np.float32)
    c32 = np.array([float("%.9e" % x) for x in c], dtype=np.float32)  # as printed, as in the C++
    p = c32[-1]
    for k in c32[-2::-1]:
        p = (p * f + k).astype(np.float32)
    exact = 2.0 ** f.astype(np.float64)
    return np.max(np.abs(p.astype(np.float64) - exact) / exact)


if __name__ == "__main__":
    c, err = fit()
    print("coefficients (f^0 .. f^5):", ", ".join("%.9e" % x for x in c))
    print("largest relative error: %.2e exact, %.2e in float32" % (err, float32_error(c)))
