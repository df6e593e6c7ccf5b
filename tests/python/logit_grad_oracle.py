#!/usr/bin/env python3
"""PyTorch autograd as the oracle of `attn-explain grad --qk-norm --softcap C` and of
`train --qk-norm --softcap C` (issue 31).

grad: for random sizes, float32 and float64, causal and not, with QK-norm and/or the soft cap, it
runs `grad --save DIR`, loads the saved X, W_Q, W_K, W_V and target (or G), and recomputes with
torch written out by hand (torch 1.13 has no nn.RMSNorm): Q = X·W_Q, Q_normed = Q·rsqrt(mean(Q²) +
1e-6)·g_q with g_q a leaf of ones (the same for K), scaled = Q_normed·K_normedᵀ/√d_k, capped =
C·tanh(scaled/C), the causal mask, softmax, ·V, the loss, then backward. It compares every saved
d_* array (d_capped_scores, d_S, d_Q_normed, d_K_normed, d_q_norm_weight, d_k_norm_weight, d_Q,
d_K, d_W_Q, d_W_K, d_W_V, d_X, …) with autograd's, in the run's dtype.

train: X, nn.Linear-style weights and biases and a target written to a --load directory; the
tool's `train --load DIR --qk-norm --softcap C --save OUT` losses and final weights against the
same loop in torch float64 (torch.optim.Adam over W_Q, b_Q, W_K, b_K, W_V, b_V, g_q, g_k).

Run as: logit_grad_oracle.py ATTN_EXPLAIN. Exit 1 on a mismatch, 77 without torch or numpy.
"""
import os
import random
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import torch
except ImportError:
    print("torch or numpy missing: skipped")
    sys.exit(77)

EPS = 1e-6


def rms_norm(x, g):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * g


def forward(x, w_q, w_k, w_v, g_q, g_k, qk_norm, softcap, causal, biases=None):
    """The tool's forward pass, written out; every intermediate returned with retain_grad()."""
    b_q, b_k, b_v = biases if biases else (0, 0, 0)
    t = {"Q": x @ w_q + b_q, "K": x @ w_k + b_k, "V": x @ w_v + b_v}
    t["Q_normed"] = rms_norm(t["Q"], g_q) if qk_norm else t["Q"]
    t["K_normed"] = rms_norm(t["K"], g_k) if qk_norm else t["K"]
    d_k = w_q.shape[1]
    t["scaled"] = t["Q_normed"] @ t["K_normed"].T / d_k ** 0.5
    t["capped"] = softcap * torch.tanh(t["scaled"] / softcap) if softcap else t["scaled"]
    s = t["capped"]
    if causal:
        n = s.shape[0]
        s = s.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))
    t["masked"] = s
    t["weights"] = torch.softmax(s, dim=-1)
    t["output"] = t["weights"] @ t["V"]
    for v in t.values():
        if v.requires_grad and not v.is_leaf:
            v.retain_grad()
    return t


def check_grad(exe, case):
    n, d, d_k, d_v, seed, dtype, causal, qk_norm, softcap, loss = case
    flags = ["--seq-len", str(n), "--d-model", str(d), "--d-k", str(d_k), "--d-v", str(d_v), "--seed", str(seed),
             "--dtype", dtype, "--loss", loss]
    flags += ["--mask", "causal"] if causal else []
    flags += ["--qk-norm"] if qk_norm else []
    flags += ["--softcap", repr(softcap)] if softcap else []
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([exe, "grad", "--save", out, "--format", "json"] + flags, check=True, stdout=subprocess.DEVNULL)
        tt = torch.float32 if dtype == "float32" else torch.float64
        load = lambda name: torch.from_numpy(np.load(os.path.join(out, name + ".npy"))).to(tt)
        x, w_q, w_k, w_v = (load(a).requires_grad_() for a in ("X", "W_Q", "W_K", "W_V"))
        g_q = torch.ones(d_k, dtype=tt, requires_grad=True)
        g_k = torch.ones(d_k, dtype=tt, requires_grad=True)
        t = forward(x, w_q, w_k, w_v, g_q, g_k, qk_norm, softcap, causal)
        if loss == "mse":
            value = torch.nn.functional.mse_loss(t["output"], load("target"))
        else:
            value = (t["output"] * load("G")).sum()
        value.backward()
        want = {"d_output": t["output"].grad, "d_V": t["V"].grad, "d_P": t["weights"].grad,
                "d_W_Q": w_q.grad, "d_W_K": w_k.grad, "d_W_V": w_v.grad, "d_X": x.grad, "d_Q": t["Q"].grad,
                "d_K": t["K"].grad}
        if softcap:
            want["d_capped_scores"] = t["capped"].grad
        want["d_S"] = t["scaled"].grad if softcap else t["masked"].grad
        if qk_norm:
            want.update({"d_Q_normed": t["Q_normed"].grad, "d_K_normed": t["K_normed"].grad,
                         "d_q_norm_weight": g_q.grad, "d_k_norm_weight": g_k.grad})
        saved = sorted(f[:-4] for f in os.listdir(out) if f.startswith("d_"))
        if saved != sorted(want):
            print(f"FAIL {' '.join(flags)}: saved {saved}, expected {sorted(want)}")
            return False
        tol = 2e-5 if dtype == "float32" else 1e-10
        for name, w in want.items():
            got = load(name)
            diff = (got - w).abs().max().item() if got.numel() else 0.0
            scale = max(1.0, w.abs().max().item())
            if tuple(got.shape) != tuple(w.shape) or not diff <= tol * scale:
                print(f"FAIL {' '.join(flags)}: {name} differs by {diff:.3g} (tolerance {tol} x {scale:.3g})")
                return False
        print(f"ok grad {' '.join(flags)}")
        return True


def write_npy(path, a):
    np.save(path, np.asarray(a, dtype=np.float64))


def check_train(exe, n, d, d_k, d_v, steps, lr, softcap, causal, seed):
    rng = np.random.default_rng(seed)
    a = 1 / d ** 0.5
    arrays = {"X": rng.standard_normal((n, d)), "W_Q": rng.uniform(-a, a, (d, d_k)),
              "W_K": rng.uniform(-a, a, (d, d_k)), "W_V": rng.uniform(-a, a, (d, d_v)),
              "b_Q": rng.uniform(-a, a, d_k), "b_K": rng.uniform(-a, a, d_k), "b_V": rng.uniform(-a, a, d_v),
              "target": rng.standard_normal((n, d_v))}
    with tempfile.TemporaryDirectory() as inp, tempfile.TemporaryDirectory() as out:
        for name, value in arrays.items():
            write_npy(os.path.join(inp, name + ".npy"), value)
        cmd = [exe, "train", "--load", inp, "--qk-norm", "--softcap", repr(softcap), "--steps", str(steps), "--lr",
               repr(lr), "--save", out, "--format", "json"] + (["--mask", "causal"] if causal else [])
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        p = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True) for k, v in arrays.items() if k != "target"}
        x = p.pop("X").detach()
        target = torch.tensor(arrays["target"], dtype=torch.float64)
        g_q = torch.ones(d_k, dtype=torch.float64, requires_grad=True)
        g_k = torch.ones(d_k, dtype=torch.float64, requires_grad=True)
        params = [p["W_Q"], p["b_Q"], p["W_K"], p["b_K"], p["W_V"], p["b_V"], g_q, g_k]
        opt = torch.optim.Adam(params, lr=lr)
        losses = []
        for _ in range(steps):
            opt.zero_grad()
            t = forward(x, p["W_Q"], p["W_K"], p["W_V"], g_q, g_k, True, softcap, causal,
                        (p["b_Q"], p["b_K"], p["b_V"]))
            loss = torch.nn.functional.mse_loss(t["output"], target)
            losses.append(loss.item())
            loss.backward()
            opt.step()
        got = np.load(os.path.join(out, "losses.npy"))
        worst = float(np.max(np.abs(got - np.array(losses))))
        finals = {"W_Q": p["W_Q"], "W_V": p["W_V"], "g_q": g_q, "g_k": g_k}
        for name, w in finals.items():
            worst = max(worst, float(np.max(np.abs(np.load(os.path.join(out, name + ".npy")) - w.detach().numpy()))))
        label = f"train n={n} d_model={d} d_k={d_k} d_v={d_v} steps={steps} lr={lr} softcap={softcap} causal={causal}"
        if not worst <= 1e-9:
            print(f"FAIL {label}: losses or final parameters differ by {worst:.3g}")
            return False
        print(f"ok {label} (max diff {worst:.2g})")
        return True


def main():
    exe = sys.argv[1]
    rnd = random.Random(31)
    cases = []
    for i in range(12):  # random sizes; every flag combination at both dtypes, causal and not
        qk_norm, softcap = [(True, 0.0), (False, 1.0), (True, 2.5)][i % 3]
        if softcap:
            softcap = round(rnd.uniform(0.3, 4.0), 3)
        cases.append((rnd.randint(1, 9), rnd.randint(2, 9), rnd.randint(2, 6), rnd.randint(1, 5), rnd.randint(0, 999),
                      ["float64", "float32"][(i // 3) % 2], i % 2 == 0, qk_norm, softcap,
                      "sum" if i % 4 == 3 else "mse"))
    ok = all([check_grad(exe, c) for c in cases])
    ok = check_train(exe, 5, 6, 4, 3, 25, 0.05, 1.5, False, 1) and ok
    ok = check_train(exe, 6, 4, 3, 5, 15, 0.02, 0.7, True, 2) and ok
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
