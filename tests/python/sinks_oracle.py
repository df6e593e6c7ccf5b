#!/usr/bin/env python3
"""An independent re-implementation of `attn-explain kv-cache --sinks S --mask window:W` in NumPy.

For random S, W, prompt length, decode steps, heads, RoPE and dtype, it runs the tool with --format
json and --save, then, from the saved X and weights alone:
  - replays StreamingLLM's policy as a list (append, then drop the entry after the sinks while more
    than S + W are held) and compares every step's kept positions, cache positions, the query's
    cache position and the positions evicted;
  - checks the policy against its closed form (position j is kept after token t iff j < S or
    j > t - W);
  - recomputes every output row and every step's weight on the sinks with keys and the query
    rotated at their cache positions, in float64, and compares them with the JSON and output.npy.
Prints "ok" and exits 0, or prints the differences and exits 1. Usage: sinks_oracle.py BIN [COUNT]."""
import json
import os
import random
import subprocess
import sys
import tempfile

import numpy as np


def rope(x, positions, base, style):
    """x (n, d) rotated pairwise at positions (n,): half pairs (i, i + d/2) or interleaved (2i, 2i + 1)."""
    n, d = x.shape
    theta = base ** (-np.arange(0, d, 2, dtype=np.float64) / d)
    ang = np.asarray(positions, dtype=np.float64)[:, None] * theta[None, :]
    cos, sin = np.cos(ang), np.sin(ang)
    out = x.copy()
    if style == "half":
        a, b = x[:, : d // 2], x[:, d // 2 :]
        out[:, : d // 2], out[:, d // 2 :] = a * cos - b * sin, a * sin + b * cos
    else:
        a, b = x[:, 0::2], x[:, 1::2]
        out[:, 0::2], out[:, 1::2] = a * cos - b * sin, a * sin + b * cos
    return out


def attend(X, WQ, WK, WV, kept, t, h, g, rope_cfg):
    """Query t over the kept positions, every one at its cache position. Returns (row, sink weights)."""
    d = X.shape[1]
    dh = d // h
    L = len(kept)
    q = X[t] @ WQ
    K = X[kept] @ WK
    V = X[kept] @ WV
    out = np.zeros(d)
    weights = []
    for hh in range(h):
        kv = hh // (h // g)
        qh = q[hh * dh : (hh + 1) * dh][None, :]
        kh = K[:, kv * dh : (kv + 1) * dh]
        if rope_cfg:
            qh = rope(qh, [L - 1], *rope_cfg)
            kh = rope(kh, np.arange(L), *rope_cfg)
        s = (qh @ kh.T)[0] / np.sqrt(dh)
        w = np.exp(s - s.max())
        w /= w.sum()
        weights.append(w)
        out[hh * dh : (hh + 1) * dh] = w @ V[:, kv * dh : (kv + 1) * dh]
    return out, weights


def one_case(binary, rnd, folder):
    S, W = rnd.randint(1, 4), rnd.randint(1, 5)
    p, steps = rnd.randint(1, 9), rnd.randint(1, 9)
    h = rnd.choice([1, 2, 4])
    g = rnd.choice([k for k in (1, 2, 4) if k <= h and h % k == 0])
    dh = rnd.choice([2, 4, 6])
    d = h * dh
    use_rope = rnd.random() < 0.7
    style, base = rnd.choice(["half", "interleaved"]), rnd.choice([10000.0, 100.0])
    dtype = rnd.choice(["float32", "float64"])
    seed = rnd.randint(0, 10**6)
    args = [binary, "kv-cache", "--sinks", str(S), "--mask", f"window:{W}", "--prompt-len", str(p), "--steps",
            str(steps), "--heads", str(h), "--kv-heads", str(g), "--d-model", str(d), "--seed", str(seed),
            "--dtype", dtype, "--format", "json", "--save", folder]
    if use_rope:
        args += ["--rope", "--rope-style", style, "--rope-base", str(base)]
    run = subprocess.run(args, capture_output=True, text=True, check=False)
    label = " ".join(args[1:-4])
    if run.returncode != 0:
        return [f"{label}: exit {run.returncode}: {run.stderr.strip()}"]
    doc = json.loads(run.stdout)
    load = lambda name: np.load(os.path.join(folder, name + ".npy")).astype(np.float64)
    X, WQ, WK, WV, output = load("X"), load("W_Q"), load("W_K"), load("W_V"), load("output")
    tol = 2e-4 if dtype == "float32" else 1e-10
    rope_cfg = (base, style) if use_rope else None
    errors = []
    kept, position = [], 0
    for k, step in enumerate(doc["steps"]):
        count = p if k == 0 else 1
        evicted = []
        for _ in range(count):
            kept.append(position)
            if len(kept) > S + W:
                evicted.append(kept.pop(S))
            closed = [j for j in range(position + 1) if j < S or j > position - W]
            if kept != closed:
                errors.append(f"{label}: after token {position} the list replay keeps {kept}, the closed form {closed}")
            row, weights = attend(X, WQ, WK, WV, kept, position, h, g, rope_cfg)
            if np.max(np.abs(row - output[position])) > tol:
                errors.append(f"{label}: output row {position} differs by {np.max(np.abs(row - output[position])):.3g}")
            position += 1
        want = {"kept_positions": kept, "cache_positions": list(range(len(kept))),
                "query_cache_position": len(kept) - 1, "evicted": evicted}
        for key, value in want.items():
            if step[key] != value:
                errors.append(f"{label}: step {k} {key} = {step[key]}, NumPy says {value}")
        mass = [float(w[: min(S, len(kept))].sum()) for w in weights]
        if np.max(np.abs(np.array(mass) - np.array(step["sink_mass"]))) > tol:
            errors.append(f"{label}: step {k} sink_mass = {step['sink_mass']}, NumPy says {mass}")
    return errors


def run_oracle(one_case, default_count, seed, what):
    """Runs one_case(binary, rnd, folder) COUNT times (argv: BIN [COUNT]); prints the first errors or "ok"."""
    if len(sys.argv) < 2:
        print(sys.modules["__main__"].__doc__)
        return 2
    count = int(sys.argv[2]) if len(sys.argv) > 2 else default_count
    rnd = random.Random(seed)
    errors = []
    for _ in range(count):
        with tempfile.TemporaryDirectory() as folder:
            errors += one_case(sys.argv[1], rnd, os.path.join(folder, "run"))
    for e in errors[:20]:
        print(e)
    if errors:
        return 1
    print(f"ok: {count} {what} agree with NumPy")
    return 0


def main():
    return run_oracle(one_case, 60, 2026, "random sink caches")


if __name__ == "__main__":
    sys.exit(main())
