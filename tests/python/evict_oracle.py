#!/usr/bin/env python3
"""An independent re-implementation of `attn-explain kv-cache --evict h2o|snapkv --budget B` in NumPy.

For random policies, budgets, H2O's recent part, SnapKV's window and pooling width (or their
defaults), prompt lengths, decode steps, heads and K/V heads, RoPE and dtypes, it runs the tool with
--format json and --save, then, from the saved X and weights alone, in float64:
  - H2O: the prompt attends whole; every key's accumulated attention (added over the query heads of
    its K/V head); then, one entry at a time, the non-recent entry with the smallest score leaves
    (a tie: the older) until B remain; each decode query reads its head's entries and its own key,
    its weights join the scores, and the same one-at-a-time rule trims back to B;
  - SnapKV: the last W prompt queries' weights on the earlier positions, summed, max-pooled with
    -inf padding, a stable sort for the B − W best beside the window; decode tokens all kept;
and compares every step's kept and evicted positions per K/V head exactly, H2O's scores, every
output row with output.npy, and each step's error against full causal attention.
A choice of the tool that differs from NumPy's is accepted only as a near-tie (near_ties.py): the
score the tool preferred within 1e-4 (float32) or 1e-9 (float64) times max(1, the largest score) of
NumPy's, and not an exact float64 tie (there the older wins); a note is printed and the replay
follows the tool's choice, so later steps and outputs are checked on the tool's cache.
Prints "ok" and exits 0, or prints the differences and exits 1. Usage: evict_oracle.py BIN [COUNT]."""
import json
import os
import subprocess
import sys

import numpy as np

from near_ties import NearTies, swapped_gaps  # a tool's choice that differs only by rounding
from sinks_oracle import rope, run_oracle  # RoPE at positions (half or interleaved); the case loop


def heads_of(X, WQ, WK, WV, h, g, rope_cfg):
    """Per query head q (T, dh) and per K/V head k, v (T, dh), rotated at the text's positions."""
    T, d = X.shape
    dh = d // h
    Q, K, V = X @ WQ, X @ WK, X @ WV
    q = [Q[:, i * dh : (i + 1) * dh] for i in range(h)]
    k = [K[:, j * dh : (j + 1) * dh] for j in range(g)]
    v = [V[:, j * dh : (j + 1) * dh] for j in range(g)]
    if rope_cfg:
        q = [rope(x, np.arange(T), *rope_cfg) for x in q]
        k = [rope(x, np.arange(T), *rope_cfg) for x in k]
    return q, k, v


def softmax(s):
    w = np.exp(s - s.max(axis=-1, keepdims=True))
    return w / w.sum(axis=-1, keepdims=True)


def full_causal(q, k, v, h, g):
    T, dh = q[0].shape
    out = np.zeros((T, h * dh))
    mask = np.triu(np.ones((T, T), dtype=bool), 1)
    for i in range(h):
        j = i // (h // g)
        s = np.where(mask, -np.inf, q[i] @ k[j].T / np.sqrt(dh))
        out[:, i * dh : (i + 1) * dh] = softmax(s) @ v[j]
    return out


def h2o_trim(kept, scores, budget, recent, tool=None, ties=None):
    """One entry at a time: the non-recent entry with the smallest score leaves (a tie: the older).
    tool: the positions the tool evicted at this step; when NumPy's choice is not among them, the
    tool's cheapest non-recent one leaves instead if ties accepts the gap (a near-tie)."""
    gone = []
    while len(kept) > budget:
        older = len(kept) - min(recent, len(kept))
        worst = min(range(older), key=lambda i: (scores[i], i))
        theirs = [i for i in range(older) if tool is not None and kept[i] in tool]
        if theirs and kept[worst] not in tool:
            alt = min(theirs, key=lambda i: (scores[i], i))
            what = f"H2O evicts {kept[alt]} (score {scores[alt]!r}), NumPy {kept[worst]} ({scores[worst]!r})"
            if ties.accept([scores[alt] - scores[worst]], max(abs(x) for x in scores[:older]), what):
                worst = alt
        gone.append(kept.pop(worst))
        scores.pop(worst)
    return gone


def snapkv_select(votes, p, budget, observe, pool, tool=None, ties=None):
    """The B − W best pooled votes (a stable sort: ties keep the older) beside the window; tool: the
    tool's kept positions, taken instead when every position it swaps is a near-tie."""
    padded = np.concatenate([np.full(pool // 2, -np.inf), votes, np.full(pool // 2, -np.inf)])
    pooled = np.array([padded[i : i + pool].max() for i in range(len(votes))])
    best = sorted(int(i) for i in np.argsort(-pooled, kind="stable")[: budget - observe])
    theirs = sorted(i for i in (tool or []) if 0 <= i < p - observe)
    if tool is not None and theirs != best:
        what = f"SnapKV keeps {theirs}, NumPy {best} (pooled {pooled.tolist()})"
        if ties.accept(swapped_gaps(pooled, best, theirs), np.max(np.abs(pooled)), what):
            best = theirs
    return best + list(range(p - observe, p))


def tool_choice(told, n, key, j):
    """The tool's list `key` for K/V head j at step n, or None when its JSON has none."""
    try:
        return list(told[n][key][j])
    except (IndexError, KeyError, TypeError):
        return None


def replay(case, q, k, v, told, ties):
    """Every step: kept and evicted per K/V head, H2O's scores, the output rows. Where the tool's
    JSON steps (told) chose differently by a near-tie (ties), the replay follows the tool's choice."""
    p, steps, h, g, B = case["p"], case["steps"], case["h"], case["g"], case["B"]
    dh = q[0].shape[1]
    group = h // g
    mask = np.triu(np.ones((p, p), dtype=bool), 1)
    rows = np.zeros((p + steps, h * dh))
    kept, scores, out = [], [], []
    for j in range(g):
        w = [softmax(np.where(mask, -np.inf, q[i][:p] @ k[j][:p].T / np.sqrt(dh))) for i in range(j * group, (j + 1) * group)]
        for a, i in enumerate(range(j * group, (j + 1) * group)):
            rows[:p, i * dh : (i + 1) * dh] = w[a] @ v[j][:p]
        if case["policy"] == "h2o":
            kj, sj = list(range(p)), list(np.sum([x.sum(axis=0) for x in w], axis=0))
            gone = h2o_trim(kj, sj, B, case["R"], tool_choice(told, 0, "evicted_per_kv_head", j), ties)
        else:
            W = case["W"]
            if p > B:
                votes = np.sum([x[p - W :, : p - W].sum(axis=0) for x in w], axis=0)
                tool = tool_choice(told, 0, "kept_per_kv_head", j)
                kj = snapkv_select(votes, p, B, W, case["pool"], tool, ties)
            else:
                kj = list(range(p))
            sj, gone = [], sorted(set(range(p)) - set(kj))
        kept.append(kj)
        scores.append(sj)
    out.append({"kept": [list(x) for x in kept], "evicted": [], "scores": [list(s) for s in scores]})
    out[0]["evicted"] = [sorted(set(range(p)) - set(x)) for x in kept]
    for t in range(p, p + steps):
        evicted = []
        for j in range(g):
            kept[j].append(t)
            at = np.array(kept[j])
            add = np.zeros(len(at))
            for i in range(j * group, (j + 1) * group):
                w = softmax(q[i][t] @ k[j][at].T / np.sqrt(dh))
                rows[t, i * dh : (i + 1) * dh] = w @ v[j][at]
                add += w
            if case["policy"] == "h2o":
                scores[j] = [s + a for s, a in zip(scores[j] + [0.0], add)]
                tool = tool_choice(told, t - p + 1, "evicted_per_kv_head", j)
                evicted.append(sorted(h2o_trim(kept[j], scores[j], B, case["R"], tool, ties)))
            else:
                evicted.append([])
        out.append({"kept": [list(x) for x in kept], "evicted": evicted, "scores": [list(s) for s in scores]})
    return out, rows


def random_case(rnd):
    policy = rnd.choice(["h2o", "snapkv"])
    p, steps = rnd.randint(1, 20), rnd.randint(1, 8)
    h = rnd.choice([1, 2, 4])
    g = rnd.choice([x for x in (1, 2, 4) if x <= h and h % x == 0])
    case = {"policy": policy, "p": p, "steps": steps, "h": h, "g": g, "dh": rnd.choice([2, 4, 6]),
            "B": rnd.randint(1, p + steps + 2), "rope": rnd.random() < 0.6,
            "style": rnd.choice(["half", "interleaved"]), "base": rnd.choice([10000.0, 100.0]),
            "dtype": rnd.choice(["float32", "float64"]), "seed": rnd.randint(0, 10**6), "flags": []}
    if policy == "h2o":
        if rnd.random() < 0.5:
            case["R"] = rnd.randint(0, case["B"])
            case["flags"] += ["--recent", str(case["R"])]
        else:
            case["R"] = case["B"] // 2
    else:
        case["p"] = p = max(p, 2)
        case["B"] = max(case["B"], 2)
        if rnd.random() < 0.5 and min(p, case["B"]) >= 4:
            case["W"] = 4
        else:
            case["W"] = rnd.randint(1, min(p, case["B"]))
            case["flags"] += ["--observe", str(case["W"])]
        case["pool"] = rnd.choice([1, 3, 3, 5, 7])
        case["flags"] += ["--pool", str(case["pool"])] if case["pool"] != 3 or rnd.random() < 0.5 else []
    return case


def one_case(binary, rnd, folder):
    case = random_case(rnd)
    h, g = case["h"], case["g"]
    args = [binary, "kv-cache", "--evict", case["policy"], "--budget", str(case["B"]), "--prompt-len",
            str(case["p"]), "--steps", str(case["steps"]), "--heads", str(h), "--kv-heads", str(g), "--d-model",
            str(h * case["dh"]), "--seed", str(case["seed"]), "--dtype", case["dtype"]] + case["flags"]
    if case["rope"]:
        args += ["--rope", "--rope-style", case["style"], "--rope-base", str(case["base"])]
    args += ["--format", "json", "--save", folder]
    run = subprocess.run(args, capture_output=True, text=True, check=False)
    label = " ".join(args[1:-4])
    if run.returncode != 0:
        return [f"{label}: exit {run.returncode}: {run.stderr.strip()}"]
    doc = json.loads(run.stdout)
    load = lambda name: np.load(os.path.join(folder, name + ".npy")).astype(np.float64)
    X, output = load("X"), load("output")
    rope_cfg = (case["base"], case["style"]) if case["rope"] else None
    q, k, v = heads_of(X, load("W_Q"), load("W_K"), load("W_V"), h, g, rope_cfg)
    ties = NearTies(1e-4 if case["dtype"] == "float32" else 1e-9, label)
    want, rows = replay(case, q, k, v, doc["steps"], ties)
    full = full_causal(q, k, v, h, g)
    tol = 2e-4 if case["dtype"] == "float32" else 1e-10
    print("\n".join(ties.notes), end="\n" if ties.notes else "")
    errors = list(ties.errors)
    if doc["config"]["evict"] != case["policy"] or doc["config"]["budget"] != case["B"]:
        errors.append(f"{label}: config says {doc['config']}")
    if case["policy"] == "h2o" and doc["config"]["recent"] != case["R"]:
        errors.append(f"{label}: recent = {doc['config']['recent']}, expected {case['R']}")
    for n, (step, w) in enumerate(zip(doc["steps"], want)):
        if step["kept_per_kv_head"] != w["kept"]:
            errors.append(f"{label}: step {n} keeps {step['kept_per_kv_head']}, NumPy {w['kept']}")
        if [sorted(e) for e in step["evicted_per_kv_head"]] != w["evicted"]:
            errors.append(f"{label}: step {n} evicted {step['evicted_per_kv_head']}, NumPy {w['evicted']}")
        for got, exp in zip(step["scores_per_kv_head"], w["scores"]):
            if len(got) != len(exp) or (exp and np.max(np.abs(np.array(got) - np.array(exp))) > tol * 10):
                errors.append(f"{label}: step {n} scores {got}, NumPy {exp}")
        first, count = step["positions"][0], step["positions"][1] - step["positions"][0] + 1
        err = np.max(np.abs(rows[first : first + count] - full[first : first + count]))
        if abs(err - step["error_vs_full"]) > tol * 10:
            errors.append(f"{label}: step {n} error_vs_full {step['error_vs_full']}, NumPy {err}")
    if np.max(np.abs(rows - output)) > tol:
        errors.append(f"{label}: outputs differ by {np.max(np.abs(rows - output)):.3g}")
    return errors


def main():
    return run_oracle(one_case, 80, 3434, "random evicting caches (H2O and SnapKV)")


if __name__ == "__main__":
    sys.exit(main())
