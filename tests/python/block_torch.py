#!/usr/bin/env python3
"""`attn-explain block` against PyTorch, written out by hand from the saved weights (issue 33).

For every configuration pre/post × layernorm/rmsnorm × gelu/swiglu × decoder/encoder ×
float32/float64 (32 runs, sizes varied) it runs `block --save DIR`, loads X and the weights, and
recomputes every intermediate in float64 with PyTorch's own pieces:

  norms      F.layer_norm(x, (d,), w, b, eps=1e-5) | x · rsqrt(mean(x²) + 1e-6) · w
  attention  nn.MultiheadAttention(bias=False, batch_first=True) loaded with W_Qᵀ, W_Kᵀ, W_Vᵀ
             (in_proj_weight) and W_Oᵀ (out_proj), attn_mask True above the diagonal for the
             decoder; its per-head weights (average_attn_weights=False) and output; the scores
             Q_h·K_hᵀ/√d_head by einsum
  MLP        F.gelu(u, approximate='none') | F.silu(g) · u, then · W_down
  pre-norm   h = x + MHA(norm1(x)), out = h + MLP(norm2(h))
  post-norm  h = norm1(x + MHA(x)), out = norm2(h + MLP(h))

and compares each saved file (the set of files must be exactly the expected one). It also checks
that the norms' weights are not all 1 and their biases not 0, so a reference without them fails.
Run as: block_torch.py ATTN_EXPLAIN. Exit 1 on the first mismatch, 77 without torch.
"""
import itertools
import math
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import torch
    import torch.nn.functional as F
except ImportError:
    print("SKIP: needs numpy and torch")
    sys.exit(77)

torch.set_grad_enabled(False)


def norm(kind, x, w, b):
    if kind == "layernorm":
        return F.layer_norm(x, (x.shape[-1],), w, b, eps=1e-5)
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w


def mha(x, t, heads, causal):
    n, d = x.shape
    m = torch.nn.MultiheadAttention(d, heads, bias=False, batch_first=True, dtype=torch.float64)
    m.in_proj_weight.copy_(torch.cat([t["W_Q"].T, t["W_K"].T, t["W_V"].T]))
    m.out_proj.weight.copy_(t["W_O"].T)
    mask = torch.ones(n, n, dtype=torch.bool).triu(1) if causal else None  # True = blocked
    out, weights = m(x[None], x[None], x[None], attn_mask=mask, need_weights=True, average_attn_weights=False)
    dh = d // heads
    q = (x @ t["W_Q"]).reshape(n, heads, dh)
    k = (x @ t["W_K"]).reshape(n, heads, dh)
    scores = torch.einsum("ihc,jhc->hij", q, k) / math.sqrt(dh)
    return {"Q": x @ t["W_Q"], "K": x @ t["W_K"], "V": x @ t["W_V"], "scores": scores, "weights": weights[0],
            "attn_out": out[0]}


def mlp(x, t, kind):
    r = {"mlp_up": x @ t["W_up"]}
    if kind == "gelu":
        r["mlp_act"] = F.gelu(r["mlp_up"], approximate="none")
        hidden = r["mlp_act"]
    else:
        r["mlp_gate"] = x @ t["W_gate"]
        r["mlp_act"] = F.silu(r["mlp_gate"])
        r["mlp_hidden"] = hidden = r["mlp_act"] * r["mlp_up"]
    r["mlp_out"] = hidden @ t["W_down"]
    return r


def reference(t, cfg):
    place, kind, act, arch = cfg["norm"], cfg["norm_type"], cfg["mlp"], cfg["arch"]
    x = t["X"]
    n1 = lambda v: norm(kind, v, t["norm1_weight"], t.get("norm1_bias"))
    n2 = lambda v: norm(kind, v, t["norm2_weight"], t.get("norm2_bias"))
    r = {}
    if place == "pre":
        r["norm1"] = n1(x)
        r.update(mha(r["norm1"], t, cfg["heads"], arch == "decoder"))
        r["resid1"] = x + r["attn_out"]
        r["norm2"] = n2(r["resid1"])
        r.update(mlp(r["norm2"], t, act))
        r["output"] = r["resid1"] + r["mlp_out"]
    else:
        r.update(mha(x, t, cfg["heads"], arch == "decoder"))
        r["resid1"] = x + r["attn_out"]
        r["norm1"] = n1(r["resid1"])
        r.update(mlp(r["norm1"], t, act))
        r["resid2"] = r["norm1"] + r["mlp_out"]
        r["output"] = n2(r["resid2"])
    return r


def check_run(exe, cfg, folder):
    args = [exe, "block", "--save", folder, "--no-pause"]
    for k in ("norm", "norm_type", "mlp", "arch", "dtype", "seq_len", "d_model", "heads", "seed"):
        args += ["--" + k.replace("_", "-"), str(cfg[k])]
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    files = {f[:-4]: np.load(os.path.join(folder, f)) for f in os.listdir(folder)}
    want_dtype = np.float32 if cfg["dtype"] == "float32" else np.float64
    t = {k: torch.from_numpy(v.astype(np.float64)) for k, v in files.items()}
    ref = reference(t, cfg)
    inputs = {"X", "norm1_weight", "norm2_weight", "W_Q", "W_K", "W_V", "W_O", "W_up", "W_down"}
    if cfg["norm_type"] == "layernorm":
        inputs |= {"norm1_bias", "norm2_bias"}
    if cfg["mlp"] == "swiglu":
        inputs |= {"W_gate"}
    expected = inputs | set(ref)
    if set(files) != expected:
        return f"files {sorted(set(files) ^ expected)} differ from the expected set"
    for k, v in files.items():
        if v.dtype != want_dtype:
            return f"{k}.npy is {v.dtype}, not {cfg['dtype']}"
    for w in ("norm1_weight", "norm2_weight"):
        if bool((t[w] == 1).all()):
            return f"{w} is all ones: a missing weight would pass"
    for b in ("norm1_bias", "norm2_bias"):
        if b in t and bool((t[b] == 0).all()):
            return f"{b} is all zeros: a missing bias would pass"
    tol = 1e-4 if cfg["dtype"] == "float32" else 1e-10
    for k, want in ref.items():
        got = t[k]
        if tuple(got.shape) != tuple(want.shape):
            return f"{k}: shape {tuple(got.shape)}, torch has {tuple(want.shape)}"
        diff = ((got - want).abs() / want.abs().clamp(min=1)).max().item()
        if not diff <= tol:
            return f"{k}: max relative difference {diff:.3e} over {tol:g}"
    return None


def main():
    exe = sys.argv[1]
    configs = itertools.product(["pre", "post"], ["layernorm", "rmsnorm"], ["gelu", "swiglu"],
                                ["decoder", "encoder"], ["float32", "float64"])
    sizes = [(4, 8, 2), (5, 12, 3), (3, 16, 4), (6, 8, 1)]
    count = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i, (place, kind, act, arch, dtype) in enumerate(configs):
            n, d, h = sizes[i % len(sizes)]
            cfg = {"norm": place, "norm_type": kind, "mlp": act, "arch": arch, "dtype": dtype, "seq_len": n,
                   "d_model": d, "heads": h, "seed": i}
            folder = os.path.join(tmp, f"run{i}")
            why = check_run(exe, cfg, folder)
            if why:
                print("MISMATCH", " ".join(f"{k}={v}" for k, v in cfg.items()), "-", why)
                return 1
            count += 1
    print(f"block: all {count} configurations match PyTorch")
    return 0


if __name__ == "__main__":
    sys.exit(main())
