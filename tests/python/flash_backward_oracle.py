#!/usr/bin/env python3
"""PyTorch autograd as the oracle of `attn-explain flash --backward` (issue 31).

For float32 and float64, causal and not, and sizes where n is not a multiple of the tile sizes,
it runs `flash --backward --save DIR`, loads the saved Q, K, V and d_output, and recomputes with
torch: O = softmax(Q·Kᵀ/√d_k, masked)·V, then O.backward(d_output) for dQ, dK, dV, and
torch.logsumexp of the scaled, masked scores for softmax_lse. It compares them with the saved
d_Q, d_K, d_V and softmax_lse (and output), in the run's dtype.

Run as: flash_backward_oracle.py ATTN_EXPLAIN. Exit 1 on the first mismatch, 77 without torch.
"""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import torch
except ImportError:
    print("torch or numpy missing: skipped")
    sys.exit(77)

CASES = [  # (extra flags, dtype)
    ("--seq-len 7 --block-q 3 --block-k 2", "float64"),
    ("--seq-len 7 --block-q 3 --block-k 2 --mask causal", "float64"),
    ("--seq-len 10 --block-q 4 --block-k 3 --d-k 5 --d-v 3 --seed 11", "float32"),
    ("--seq-len 10 --block-q 4 --block-k 3 --d-k 5 --d-v 3 --seed 11 --mask causal", "float32"),
    ("--seq-len 13 --block-q 5 --block-k 4 --d-model 12 --d-k 6 --d-v 6 --seed 3 --mask causal", "float64"),
    ("--seq-len 1 --block-q 4 --block-k 3", "float32"),
]


def check(exe, flags, dtype):
    with tempfile.TemporaryDirectory() as d:
        cmd = [exe, "flash", "--backward", "--dtype", dtype, "--save", d, "--format", "json"] + flags.split()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        t = torch.float32 if dtype == "float32" else torch.float64
        load = lambda name: torch.from_numpy(np.load(os.path.join(d, name + ".npy"))).to(t)
        q, k, v, d_o = (load(x).requires_grad_(x != "d_output") for x in ("Q", "K", "V", "d_output"))
        n, d_k = q.shape
        s = q @ k.T / d_k ** 0.5
        if "--mask causal" in flags:
            s = s.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))
        o = torch.softmax(s, dim=-1) @ v
        o.backward(d_o)
        tol = 1e-5 if dtype == "float32" else 1e-10
        pairs = [("output", o.detach()), ("softmax_lse", torch.logsumexp(s.detach(), dim=-1)),
                 ("d_Q", q.grad), ("d_K", k.grad), ("d_V", v.grad)]
        for name, want in pairs:
            got = load(name)
            diff = (got - want).abs().max().item()
            if not diff <= tol * max(1.0, want.abs().max().item()):
                print(f"FAIL {dtype} {flags}: {name} differs by {diff:.3g} (tolerance {tol})")
                return False
        print(f"ok {dtype} {flags}")
        return True


def main():
    exe = sys.argv[1]
    ok = all([check(exe, flags, dtype) for flags, dtype in CASES])
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
