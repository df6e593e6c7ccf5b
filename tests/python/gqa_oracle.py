#!/usr/bin/env python3
"""An independent re-implementation of `attn-explain variant gqa-from-mha` in PyTorch (float64).

For random heads, K/V groups g, widths, lengths, masks and seeds (random weights), and for models
trained by `learn --save` with a short --steps (learned positions, and RoPE with QK-norm), it runs
the tool with --format json and --save, then, from the saved tensors alone:
  - mean-pools W_K and W_V into g groups of heads/g consecutive heads (Ainslie et al. 2023, §2.2)
    with torch's view/mean and compares W_K_pooled, W_V_pooled;
  - runs the tiny model forward (embedding + positions, per layer Q, K, V, RMSNorm on q and k
    when qk_norm, interleaved RoPE when rope, scaled scores, soft cap, mask, softmax, Z·W_O added to
    the residual, unembedding) with the K/V heads expanded by repeat_interleave, for the MHA model
    and the pooled one, and compares every layer's input, both layer outputs and both logits;
  - recomputes the JSON's per-layer max |Δ| and relative error, the logits' errors, the groups and
    the KV cache counts (2·h·d_head, 2·g·d_head);
  - for a learn --save model, checks the loss and accuracy before pooling against learn's own
    held-out numbers (the same sequences).
Numbers agree to 1e-9. Prints "ok" and exits 0, or the differences and exits 1; exits 77 (skipped)
when torch is missing. Usage: gqa_oracle.py BIN [COUNT]."""
import json
import math
import os
import random
import subprocess
import sys
import tempfile

import numpy as np

try:
    import torch
except ImportError:
    print("skipped: no torch")
    sys.exit(77)

TOL = 1e-9
f64 = torch.float64


def load(folder, name):
    return torch.from_numpy(np.load(os.path.join(folder, name + ".npy"))).to(f64)


def rope(x, positions):
    """Interleaved RoPE on [..., T, d_h]: pair (2p, 2p+1) turns by pos * 10000^(-2p/d_h)."""
    d_h = x.shape[-1]
    freq = 10000.0 ** (-torch.arange(0, d_h, 2, dtype=f64) / d_h)
    ang = positions.to(f64)[:, None] * freq[None, :]
    cos, sin = torch.cos(ang), torch.sin(ang)
    a, b = x[..., 0::2], x[..., 1::2]
    out = torch.empty_like(x)
    out[..., 0::2] = a * cos - b * sin
    out[..., 1::2] = a * sin + b * cos
    return out


def layer_out(x, wq, wk, wv, wo, cfg, H, G, q_norm=None, k_norm=None):
    """One layer's Z·W_O on x [T, D]; K/V [T, G·d_h] expanded to H heads by repeat_interleave."""
    T, D = x.shape
    d_h = D // H
    q = (x @ wq).view(T, H, d_h).transpose(0, 1)
    k = (x @ wk).view(T, G, d_h).transpose(0, 1)
    v = (x @ wv).view(T, G, d_h).transpose(0, 1)
    if cfg["qk_norm"]:
        q = q / torch.sqrt(q.pow(2).mean(-1, keepdim=True) + 1e-6) * q_norm
        k = k / torch.sqrt(k.pow(2).mean(-1, keepdim=True) + 1e-6) * k_norm
    if cfg["positions"] == "rope":
        q, k = rope(q, torch.arange(T)), rope(k, torch.arange(T))
    k, v = k.repeat_interleave(H // G, 0), v.repeat_interleave(H // G, 0)
    s = q @ k.transpose(-2, -1) / (math.sqrt(d_h) if cfg["scale"] else 1.0)
    if cfg["softcap"]:
        s = cfg["softcap"] * torch.tanh(s / cfg["softcap"])
    if cfg["causal"]:
        s = s.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1), float("-inf"))
    z = (torch.softmax(s, -1) @ v).transpose(0, 1).reshape(T, D)
    return z @ wo


def pool(w, H, G):
    D, cols = w.shape
    d_h = cols // H
    return w.view(D, G, H // G, d_h).mean(2).reshape(D, G * d_h)


def err(a, b):
    d = b - a
    return d.abs().max().item(), (d.norm() / a.norm()).item()


def check_case(tag, folder, doc, errors):
    g = doc["gqa"]
    cfg = g["model"]
    H, G, L = g["heads"], g["kv_heads"], g["layers"]
    tokens = load(folder, "tokens").long()
    T = tokens.shape[0]
    out = []

    def close(name, a, b):
        a = torch.as_tensor(a, dtype=f64)
        b = torch.as_tensor(b, dtype=f64)
        if a.shape != b.shape or (a - b).abs().max().item() > TOL * max(1.0, b.abs().max().item()):
            out.append(f"{tag}: {name} differs")

    h = load(folder, "embed")[tokens]
    if cfg["positions"] in ("learned", "sinusoidal") and os.path.exists(os.path.join(folder, "pos.npy")):
        h = h + load(folder, "pos")
    hg = h.clone()
    for l in range(L):
        p = f"layer{l}_"
        wq, wk, wv, wo = (load(folder, p + w) for w in ("W_Q", "W_K", "W_V", "W_O"))
        qn = load(folder, p + "q_norm") if cfg["qk_norm"] else None
        kn = load(folder, p + "k_norm") if cfg["qk_norm"] else None
        pk, pv = pool(wk, H, G), pool(wv, H, G)
        close(p + "W_K_pooled", pk, load(folder, p + "W_K_pooled"))
        close(p + "W_V_pooled", pv, load(folder, p + "W_V_pooled"))
        close(p + "input", h, load(folder, p + "input"))
        om = layer_out(h, wq, wk, wv, wo, cfg, H, H, qn, kn)
        og = layer_out(h, wq, pk, pv, wo, cfg, H, G, qn, kn)
        close(p + "output_mha", om, load(folder, p + "output_mha"))
        close(p + "output_gqa", og, load(folder, p + "output_gqa"))
        mx, rel = err(om, og)
        close(p + "max_abs", mx, g["layer_errors"][l]["max_abs"])
        close(p + "relative", rel, g["layer_errors"][l]["relative"])
        hg = hg + layer_out(hg, wq, pk, pv, wo, cfg, H, G, qn, kn)
        h = h + om
    u = load(folder, "unembed")
    lm, lg = h @ u, hg @ u
    close("logits_mha", lm, load(folder, "logits_mha"))
    close("logits_gqa", lg, load(folder, "logits_gqa"))
    mx, rel = err(lm, lg)
    close("logits max_abs", mx, g["logits"]["max_abs"])
    close("logits relative", rel, g["logits"]["relative"])
    d_h = g["d_head"]
    if g["groups"] != [list(range(j * (H // G), (j + 1) * (H // G))) for j in range(G)]:
        out.append(f"{tag}: groups {g['groups']}")
    kv = g["kv_cache_per_token_per_layer"]
    if kv != {"mha_elements": 2 * H * d_h, "gqa_elements": 2 * G * d_h}:
        out.append(f"{tag}: kv cache {kv}")
    if T != cfg["seq_len"]:
        out.append(f"{tag}: {T} tokens for seq_len {cfg['seq_len']}")
    errors.extend(out)


def run(bin_, args, folder):
    r = subprocess.run([bin_] + args + ["--format", "json", "--save", folder], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: exit {r.returncode}: {r.stderr.strip()}")
    return json.loads(r.stdout)


def random_case(bin_, rnd, folder, errors):
    H = rnd.choice([1, 2, 4, 6, 8])
    G = rnd.choice([g for g in range(1, H + 1) if H % g == 0])
    d_h = rnd.choice([1, 2, 3, 4])
    n = rnd.randint(2, 12)
    args = ["variant", "gqa-from-mha", "--heads", str(H), "--kv-heads", str(G), "--d-model", str(H * d_h),
            "--seq-len", str(n), "--seed", str(rnd.randint(0, 10**6))]
    if rnd.random() < 0.3:
        args += ["--mask", "none"]
    check_case(" ".join(args), folder, run(bin_, args, folder), errors)


def learned_case(bin_, learn_args, g, root, k, errors):
    mdir, vdir = os.path.join(root, f"model{k}"), os.path.join(root, f"pooled{k}")
    r = subprocess.run([bin_, "learn"] + learn_args + ["--format", "json", "--save", mdir], capture_output=True,
                       text=True)
    if r.returncode != 0:
        errors.append(f"learn {' '.join(learn_args)}: exit {r.returncode}: {r.stderr.strip()}")
        return
    learned = json.loads(r.stdout)
    doc = run(bin_, ["variant", "gqa-from-mha", "--kv-heads", str(g), "--load", mdir], vdir)
    tag = f"learn {' '.join(learn_args)} → --kv-heads {g}"
    check_case(tag, vdir, doc, errors)
    task = doc["gqa"]["task"]
    if abs(task["before"]["loss"] - learned["final"]["loss"]) > TOL or \
            task["before"]["accuracy"] != learned["final"]["accuracy"]:
        errors.append(f"{tag}: before-pooling {task['before']} is not learn's {learned['final']['loss']}")
    if not doc["gqa"]["loaded"] or task["name"] != learned["task"]:
        errors.append(f"{tag}: task {task}")


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    rnd = random.Random(3434)
    errors = []
    with tempfile.TemporaryDirectory() as root:
        try:
            for k in range(count):
                random_case(sys.argv[1], rnd, os.path.join(root, f"run{k}"), errors)
            learned_case(sys.argv[1], ["--heads", "4", "--layers", "2", "--steps", "40", "--seed", "9"], 2, root, 0,
                         errors)
            learned_case(sys.argv[1], ["--task", "next-token", "--heads", "4", "--positions", "rope", "--qk-norm",
                                       "--softcap", "30", "--steps", "30", "--seed", "1"], 1, root, 1, errors)
        except RuntimeError as e:
            errors.append(str(e))
    print("\n".join(errors[:20]) if errors else f"ok: {count} random and 2 learned GQA-from-MHA runs agree with torch")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
