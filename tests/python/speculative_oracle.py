#!/usr/bin/env python3
"""An independent re-implementation of `attn-explain speculative`'s shown round in NumPy.

For random chains and trees, prompt lengths, model sizes, seeds, trained or untrained models and
both acceptance rules, it runs the tool with --format json and --save DIR (DIR/target and
DIR/draft: the two models as learn --save writes one), then, from the saved weights alone:
  - rebuilds the tree from `parent` and checks its branching, the tree mask (a candidate sees the
    prompt, its ancestors and itself) and the position ids (the prompt's length plus the depth);
  - runs each model on plain causal sequences, one branch at a time (prompt + the path to a node),
    never on the tree mask, in float64;
  - greedy: the draft's candidates are, under each node, its most probable tokens in order; the
    target accepts the child whose token is its argmax and emits its argmax where none is; the
    accepted nodes and the emitted tokens must be the tool's;
  - sample: the accepted nodes form a path from the root, each emitted token but the last is its
    accepted candidate's token, and every candidate is in the vocabulary.
Prints "ok" and exits 0, or prints the differences and exits 1. Usage: speculative_oracle.py BIN [COUNT]."""
import json
import os
import random
import subprocess
import sys
import tempfile

import numpy as np


def load_model(folder):
    with open(os.path.join(folder, "model.json")) as f:
        cfg = json.load(f)
    if cfg["positions"] not in ("learned", "none") or cfg["qk_norm"] or cfg["softcap"] is not None:
        raise SystemExit(f"{folder}: the oracle reads learned or no positions, no QK-norm, no soft cap")
    t = {}
    for name in os.listdir(folder):
        if name.endswith(".npy"):
            t[name[:-4]] = np.load(os.path.join(folder, name)).astype(np.float64)
    return cfg, t


def next_distribution(model, seq):
    """The model's softmax over the vocabulary after the causal sequence `seq` (its last row)."""
    cfg, t = model
    n, D, H = len(seq), cfg["d_model"], cfg["heads"]
    dh = D // H
    h = t["embed"][np.asarray(seq)]
    if cfg["positions"] == "learned":
        h = h + t["pos"][:n]
    causal = np.tril(np.ones((n, n), dtype=bool))
    for l in range(cfg["layers"]):
        q, k, v = (h @ t[f"layer{l}_W_{m}"] for m in "QKV")
        z = np.zeros_like(h)
        for j in range(H):
            sl = slice(j * dh, (j + 1) * dh)
            s = q[:, sl] @ k[:, sl].T
            if cfg["scale"]:
                s = s / np.sqrt(dh)
            s = np.where(causal, s, -np.inf)
            a = np.exp(s - s.max(axis=1, keepdims=True))
            a /= a.sum(axis=1, keepdims=True)
            z[:, sl] = a @ v[:, sl]
        h = h + z @ t[f"layer{l}_W_O"]
    logits = h[-1] @ t["unembed"]
    p = np.exp(logits - logits.max())
    return p / p.sum()


def path_to(parent, node):
    out = []
    while node >= 0:
        out.append(node)
        node = parent[node]
    return out[::-1]


def check_tree(out, P, branching, errors):
    parent = out["parent"]
    N = len(parent)
    depth = [len(path_to(parent, i)) - 1 for i in range(N)]
    expect = 0
    width = 1
    for b in branching:
        width *= b
        expect += width
    if N != expect:
        errors.append(f"{N} candidates, the branching {branching} makes {expect}")
    for i in range(N):
        if out["positions"][i] != P + depth[i]:
            errors.append(f"candidate {i}: position {out['positions'][i]}, expected {P + depth[i]}")
        sees = set(path_to(parent, i))
        row = [1] * P + [1 if j in sees else 0 for j in range(N)]
        if out["mask"][i] != row:
            errors.append(f"candidate {i}: mask row {out['mask'][i]}, expected {row}")
    children = {n: [i for i in range(N) if parent[i] == n] for n in range(-1, N)}
    for n, ch in children.items():
        d = -1 if n < 0 else depth[n]  # the root (the prompt) is depth -1
        want = branching[d + 1] if d + 1 < len(branching) else 0
        if len(ch) != want:
            errors.append(f"node {n}: {len(ch)} children, the branching gives {want}")
    return children


def top(p, k):
    """The k-th most probable token (ties: the lower index first, as a stable sort)."""
    order = sorted(range(len(p)), key=lambda i: -p[i])
    return order[k % len(p)]


def check_greedy(out, target, draft, children, errors):
    prompt, parent, tokens = out["prompt"], out["parent"], out["tokens"]
    near_tie = False
    for n, ch in children.items():
        if not ch:
            continue
        seq = prompt + [tokens[a] for a in path_to(parent, n)]
        q = next_distribution(draft, seq)
        ranked = sorted(q)[::-1]
        near_tie |= any(ranked[i] - ranked[i + 1] < 1e-9 for i in range(min(len(ch), len(q) - 1)))
        for k, c in enumerate(ch):
            want = top(q, k)
            if tokens[c] != want:
                errors.append(f"candidate {c} (child {k} of {n}): draft token {tokens[c]}, expected {want}")
    node, accepted, emitted = -1, [], []
    while True:
        seq = prompt + [tokens[a] for a in path_to(parent, node)]
        p = next_distribution(target, seq)
        ranked = sorted(p)[::-1]
        near_tie |= ranked[0] - ranked[1] < 1e-9
        best = int(np.argmax(p))
        emitted.append(best)
        hit = [c for c in children[node] if tokens[c] == best]
        if not hit:
            break
        node = hit[0]
        accepted.append(node)
    if near_tie:
        return "tie"
    if out["accepted_nodes"] != accepted:
        errors.append(f"accepted {out['accepted_nodes']}, expected {accepted}")
    if out["emitted"] != emitted:
        errors.append(f"emitted {out['emitted']}, expected {emitted}")
    return "checked"


def check_sample(out, children, vocab, errors):
    tokens, acc, emitted = out["tokens"], out["accepted_nodes"], out["emitted"]
    if any(not 0 <= x < vocab for x in tokens + emitted):
        errors.append(f"a token outside the vocabulary: {tokens} / {emitted}")
    node = -1
    for a in acc:
        if a not in children[node]:
            errors.append(f"accepted {acc}: {a} is not a child of {node}")
        node = a
    if len(emitted) != len(acc) + 1 or any(emitted[i] != tokens[a] for i, a in enumerate(acc)):
        errors.append(f"emitted {emitted} is not the accepted tokens {[tokens[a] for a in acc]} + one")
    if out["accepted"] != len(acc):
        errors.append(f"accepted {out['accepted']}, but {len(acc)} accepted nodes")


def random_case(r):
    if r.random() < 0.5:
        branching = [1] * r.randint(1, 7)
        shape = ["--chain", str(len(branching))]
    else:
        branching = [r.randint(1, 3) for _ in range(r.randint(1, 3))]
        shape = ["--tree", ",".join(map(str, branching))]
    P = r.randint(1, min(8, 16 - len(branching)))
    sizes = []
    for who in ("target", "draft"):
        heads = r.choice([1, 2])
        d = heads * r.choice([2, 4, 8])
        sizes += [f"--{who}-d-model", str(d), f"--{who}-heads", str(heads), f"--{who}-layers", str(r.randint(1, 2))]
    args = shape + ["--prompt-len", str(P), "--seed", str(r.randint(0, 10**6)), "--rounds", "1"] + sizes
    args += ["--untrained"] if r.random() < 0.4 else ["--steps", str(r.randint(5, 40))]
    args += ["--accept", r.choice(["greedy", "greedy", "sample"])]
    return args, P, branching


def main():
    binary, count = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 30
    r = random.Random(20261206)
    failures, greedy_checked, ties = 0, 0, 0
    for case in range(count):
        args, P, branching = random_case(r)
        with tempfile.TemporaryDirectory() as tmp:
            save = os.path.join(tmp, "models")
            run = subprocess.run([binary, "speculative", *args, "--format", "json", "--save", save],
                                 capture_output=True, text=True)
            if run.returncode != 0:
                print(f"case {case} {' '.join(args)}: exit {run.returncode}: {run.stderr.strip()}")
                failures += 1
                continue
            out = json.loads(run.stdout)
            target, draft = load_model(os.path.join(save, "target")), load_model(os.path.join(save, "draft"))
        errors = []
        if len(out["prompt"]) != P:
            errors.append(f"prompt {out['prompt']} is not {P} tokens")
        children = check_tree(out, P, branching, errors)
        if "greedy" in args:
            verdict = check_greedy(out, target, draft, children, errors)
            greedy_checked += verdict == "checked"
            ties += verdict == "tie"
        else:
            check_sample(out, children, target[0]["vocab"], errors)
        if out["max_diff"] > 1e-12:
            errors.append(f"max_diff {out['max_diff']}: the one-pass and branch-by-branch logits differ")
        if errors:
            failures += 1
            print(f"case {case} {' '.join(args)}:")
            for e in errors[:8]:
                print("   ", e)
    if greedy_checked < count // 3:
        print(f"only {greedy_checked} greedy rounds were checked ({ties} near-ties skipped)")
        failures += 1
    if failures:
        print(f"{failures} of {count} cases failed")
        return 1
    print(f"ok: {count} cases, {greedy_checked} greedy rounds checked token by token, {ties} near-ties skipped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
