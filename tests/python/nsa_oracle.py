#!/usr/bin/env python3
"""An independent re-implementation of `attn-explain variant nsa` (Native Sparse Attention) in NumPy.

For random n, block sizes, stride, top-n, window, widths and seeds, it runs the tool with --format
json and --save, then, from the saved X, W_Q, W_K, W_V, W_cmp_K, W_cmp_V and W_gate alone:
  - recomputes Q, K, V, the compressed keys and values (block i = keys i*d .. i*d + l - 1,
    flattened, times W_cmp), the compressed branch's weights (softmax over the blocks complete by
    query t) and its output;
  - scores the selection blocks with the paper's Eq. 9 written literally, 1-based:
    p_slc[j] = sum_{m < l'/d} sum_{n < l/d} p_cmp[(l'/d)*j - m - n];
  - selects block 0, the query's block and the one before, then the highest scores (ties: the lower
    block) up to top-n, and compares the selected sets exactly; a different set of the tool is
    accepted only as a near-tie (near_ties.py: every block it swaps within 1e-9 times max(1, the
    largest score) of NumPy's, not an exact tie, never a forced block), with a printed note, and
    the branches below are then recomputed on the tool's blocks;
  - recomputes the selected and window branches, the gates sigmoid(Q @ W_gate), the gated output,
    dense causal attention, and the JSON's kv_read_per_query, dense_kv and branch counts.
Numbers agree to 1e-10 (the variant runs in float64). Prints "ok" and exits 0, or prints the
differences and exits 1. Usage: nsa_oracle.py BIN [COUNT]."""
import json
import os
import random
import subprocess
import sys
import tempfile

import numpy as np

from near_ties import NearTies, swapped_gaps  # a tool's choice that differs only by rounding

TOL = 1e-10


def softmax_rows(q, keys, vals, idx, t):
    """Softmax of q_t . keys[idx] / sqrt(d_k) over idx: (weights over all keys, output)."""
    w = np.zeros(keys.shape[0])
    if len(idx) == 0:
        return w, np.zeros(vals.shape[1])
    s = keys[idx] @ q[t] / np.sqrt(q.shape[1])
    e = np.exp(s - s.max())
    w[idx] = e / e.sum()
    return w, w @ vals


def eq9(p_cmp, nb, l, d, lp):
    """The paper's Eq. 9 with 1-based j and compressed index; out-of-range indices add nothing."""
    out = np.zeros(nb)
    for j in range(1, nb + 1):
        for m in range(lp // d):
            for n in range(l // d):
                c = (lp // d) * j - m - n
                if 1 <= c <= len(p_cmp):
                    out[j - 1] += p_cmp[c - 1]
    return out


def select(scores, t, lp, top_n, tool=None, ties=None):
    """Block 0, the query's block and the one before, then the highest scores (ties: the lower
    block); tool: the tool's selected blocks, taken instead when every block swapped is a near-tie."""
    b = t // lp
    chosen = []
    for j in [0, b, b - 1]:
        if 0 <= j and j not in chosen and len(chosen) < top_n:
            chosen.append(j)
    order = sorted(range(b + 1), key=lambda j: (-scores[j], j))
    for j in order:
        if len(chosen) >= top_n:
            break
        if j not in chosen:
            chosen.append(j)
    chosen = sorted(chosen)
    if tool is not None and tool != chosen:
        forced = {j for j in (0, b, b - 1) if j in chosen}  # never a matter of scores
        fair = forced <= set(tool) and all(0 <= j <= b for j in tool)
        what = f"query {t} selects blocks {tool}, NumPy {chosen} (scores {scores.tolist()})"
        if ties.accept(swapped_gaps(scores, chosen, tool) if fair else [], np.max(np.abs(scores)), what):
            return tool
    return chosen


def reference(Q, K, V, WCK, WCV, WG, n, l, d, lp, top_n, w, told=None, ties=None):
    """Every branch from scratch; told: the tool's selected (n, nb) 0/1 array, followed at a near-tie."""
    m = (n - l) // d + 1 if n >= l else 0
    nb = -(-n // lp)
    kc = np.array([K[i * d:i * d + l].reshape(-1) @ WCK for i in range(m)]).reshape(m, -1)
    vc = np.array([V[i * d:i * d + l].reshape(-1) @ WCV for i in range(m)]).reshape(m, -1)
    r = {"K_cmp": kc, "V_cmp": vc, "cmp_weights": np.zeros((n, m)), "block_scores": np.zeros((n, nb)),
         "selected": np.zeros((n, nb)), "sel_weights": np.zeros((n, n)), "win_weights": np.zeros((n, n)),
         "out_cmp": np.zeros((n, V.shape[1])), "out_sel": np.zeros((n, V.shape[1])),
         "out_win": np.zeros((n, V.shape[1]))}
    r["gates"] = 1 / (1 + np.exp(-(Q @ WG)))
    counts = {"kv": [], "cmp": [], "sel": [], "win": [], "raw": [], "blocks": []}
    for t in range(n):
        visible = [i for i in range(m) if i * d + l - 1 <= t]
        r["cmp_weights"][t], r["out_cmp"][t] = softmax_rows(Q, kc, vc, visible, t)
        r["block_scores"][t] = eq9(r["cmp_weights"][t][visible], nb, l, d, lp)
        tool = None if told is None else np.flatnonzero(told[t]).tolist()
        blocks = select(r["block_scores"][t], t, lp, top_n, tool, ties)
        r["selected"][t, blocks] = 1
        sel = [k for j in blocks for k in range(j * lp, min((j + 1) * lp, t + 1))]
        win = list(range(max(0, t - w + 1), t + 1))
        r["sel_weights"][t], r["out_sel"][t] = softmax_rows(Q, K, V, sel, t)
        r["win_weights"][t], r["out_win"][t] = softmax_rows(Q, K, V, win, t)
        raw = len(set(sel) | set(win))
        for key, value in (("kv", len(visible) + raw), ("cmp", len(visible)), ("sel", len(sel)),
                           ("win", len(win)), ("raw", raw), ("blocks", blocks)):
            counts[key].append(value)
    g = r["gates"]
    r["output"] = g[:, :1] * r["out_cmp"] + g[:, 1:2] * r["out_sel"] + g[:, 2:3] * r["out_win"]
    dense = np.zeros((n, V.shape[1]))
    for t in range(n):
        dense[t] = softmax_rows(Q, K, V, list(range(t + 1)), t)[1]
    r["dense_output"] = dense
    return r, counts


def one_case(binary, rnd, folder):
    d = rnd.choice([1, 2, 3, 4])
    l, lp = d * rnd.randint(1, 4), d * rnd.randint(1, 4)
    n = rnd.randint(max(l, 2 * lp + 1), min(64, max(l, 2 * lp + 1) + 30))
    nb = -(-n // lp)
    top_n = rnd.randint(3, nb)
    w = rnd.randint(1, n + 2)
    dm, dk, dv = rnd.randint(2, 8), rnd.randint(1, 6), rnd.randint(1, 6)
    seed = rnd.randint(0, 10**6)
    args = [binary, "variant", "nsa", "--seq-len", str(n), "--d-model", str(dm), "--d-k", str(dk), "--d-v", str(dv),
            "--cmp-block", str(l), "--cmp-stride", str(d), "--sel-block", str(lp), "--top-n", str(top_n),
            "--window", str(w), "--seed", str(seed), "--init", rnd.choice(["randn", "xavier"]), "--format", "json",
            "--save", folder]
    run = subprocess.run(args, capture_output=True, text=True, check=False)
    label = " ".join(args[2:-4])
    if run.returncode != 0:
        return [f"{label}: exit {run.returncode}: {run.stderr.strip()}"]
    doc = json.loads(run.stdout)
    load = lambda name: np.load(os.path.join(folder, name + ".npy")).astype(np.float64)
    X = load("X")
    Q, K, V = X @ load("W_Q"), X @ load("W_K"), X @ load("W_V")
    errors = []
    for name, mine in (("Q", Q), ("K", K), ("V", V)):
        if np.max(np.abs(load(name) - mine)) > TOL:
            errors.append(f"{label}: {name} differs")
    told = load("selected")
    ties = NearTies(1e-9, label)  # the variant runs in float64
    want, counts = reference(Q, K, V, load("W_cmp_K"), load("W_cmp_V"), load("W_gate"), n, l, d, lp, top_n, w,
                             told if told.shape == (n, -(-n // lp)) else None, ties)
    print("\n".join(ties.notes), end="\n" if ties.notes else "")
    errors += ties.errors
    for name, value in want.items():
        got = load(name)
        if got.shape != value.shape:
            errors.append(f"{label}: {name} has shape {got.shape}, NumPy {value.shape}")
        elif name == "selected" and not np.array_equal(got, value):
            rows = np.where((got != value).any(axis=1))[0]
            errors.append(f"{label}: selected blocks differ at queries {rows.tolist()} "
                          f"(scores {want['block_scores'][rows[0]].tolist()})")
        elif value.size and np.max(np.abs(got - value)) > TOL:
            errors.append(f"{label}: {name} differs by {np.max(np.abs(got - value)):.3g}")
    json_want = {"kv_read_per_query": counts["kv"], "dense_kv": list(range(1, n + 1)),
                 "selected_blocks": counts["blocks"], "cmp_blocks": want["K_cmp"].shape[0], "sel_blocks": nb}
    for key, value in json_want.items():
        if doc[key] != value:
            errors.append(f"{label}: JSON {key} = {doc[key]}, NumPy says {value}")
    branches = doc["branches"]
    for key, value in (("compressed", counts["cmp"]), ("selected", counts["sel"]), ("window", counts["win"])):
        got = branches[key]["entries_per_query" if key == "compressed" else "keys_per_query"]
        if got != value:
            errors.append(f"{label}: JSON branches.{key} = {got}, NumPy says {value}")
    if branches["raw_distinct_per_query"] != counts["raw"]:
        errors.append(f"{label}: JSON raw_distinct_per_query differs")
    if np.max(np.abs(np.array(doc["gates"]) - want["gates"])) > TOL:
        errors.append(f"{label}: JSON gates differ")
    return errors


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 60
    rnd = random.Random(34)
    with tempfile.TemporaryDirectory() as root:  # a fresh folder for each run
        errors = [e for k in range(count) for e in one_case(sys.argv[1], rnd, os.path.join(root, f"run{k}"))]
    print("\n".join(errors[:20]) if errors else f"ok: {count} random NSA runs agree with NumPy")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
