#!/usr/bin/env python3
"""PyTorch autograd as the oracle of the block's hand-written backward (lib/attn/core/block_backward.hpp)
and of its warm-up study.

The dump (written by tests/test_block_backward_torch.cpp) holds stacks of blocks in several
configurations: x, a probe G, every weight, and the tool's gradients of sum(output * G). Here the
forward pass is written out in torch float64 (pre-norm: h = x + MHA(norm1(x)), out = h +
MLP(norm2(h)), then a final norm after the stack; post-norm: h = norm1(x + MHA(x)), out = norm2(h +
MLP(h)); LayerNorm eps 1e-5, RMSNorm eps 1e-6, exact GELU, SwiGLU = (silu(x W_gate) * (x W_up)) W_down,
weights [d_in, d_out]), autograd gives the gradients, and each is compared with the tool's.
Training: the same start, torch.optim.Adam (defaults but lr) with lr * min(1, t / W) at step t, the
loss mean((out - target)^2) before each step and after the last, against the tool's losses.

Run as: block_backward_torch.py DUMP.json. Exit 1 on a mismatch, 77 without torch.
"""
import json
import math
import sys

try:
    import torch
except ImportError:
    print("torch missing: skipped")
    sys.exit(77)

torch.set_default_dtype(torch.float64)


def tensor(v, grad=False):
    t = torch.tensor(v, dtype=torch.float64)
    return t.requires_grad_(grad)


def norm(x, w, b, kind):
    if kind == "layernorm":
        return torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, eps=1e-5)
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w


def mha(x, p, heads, causal):
    n, d = x.shape
    dh = d // heads
    q, k, v = [(x @ p[name]).view(n, heads, dh).transpose(0, 1) for name in ("w_q", "w_k", "w_v")]
    s = q @ k.transpose(-2, -1) / math.sqrt(dh)
    if causal:
        s = s.masked_fill(torch.triu(torch.ones(n, n, dtype=torch.bool), 1), float("-inf"))
    o = (torch.softmax(s, -1) @ v).transpose(0, 1).reshape(n, d)
    return o @ p["w_o"]


def mlp(x, p, kind):
    if kind == "gelu":
        return torch.nn.functional.gelu(x @ p["w_up"]) @ p["w_down"]
    return (torch.nn.functional.silu(x @ p["w_gate"]) * (x @ p["w_up"])) @ p["w_down"]


def leaves(stack, place):
    """The stack's weights as torch leaves: a dict per block, and the final norm's (pre only)."""
    blocks = []
    for b in stack["blocks"]:
        blocks.append({k: tensor(v, True) for k, v in b.items() if v != []})
    final = {}
    if place == "pre":
        final = {k: tensor(stack[k], True) for k in ("final_weight", "final_bias") if stack[k] != []}
    return blocks, final


def forward(x, blocks, final, cfg, place):
    kind, heads, causal = cfg["norm"], cfg["heads"], cfg["causal"]
    for p in blocks:
        b1, b2 = p.get("norm1_bias"), p.get("norm2_bias")
        if place == "pre":
            x = x + mha(norm(x, p["norm1_weight"], b1, kind), p, heads, causal)
            x = x + mlp(norm(x, p["norm2_weight"], b2, kind), p, cfg["mlp"])
        else:
            x = norm(x + mha(x, p, heads, causal), p["norm1_weight"], b1, kind)
            x = norm(x + mlp(x, p, cfg["mlp"]), p["norm2_weight"], b2, kind)
    if place == "pre":
        x = norm(x, final["final_weight"], final.get("final_bias"), kind)
    return x


def worst(a, b):
    return (a - b).abs().max().item()


def check_gradients(one, bad):
    place = one["place"]
    x = tensor(one["x"], True)
    blocks, final = leaves(one, place)
    (forward(x, blocks, final, one, place) * tensor(one["probe"])).sum().backward()
    name = f"{place} {one['norm']} {one['mlp']} causal={one['causal']}"
    diffs = [("d_x", worst(x.grad, tensor(one["d_x"])))]
    for l, (p, g) in enumerate(zip(blocks, one["d_blocks"])):
        diffs += [(f"block {l} {k}", worst(t.grad, tensor(g[k]))) for k, t in p.items()]
    for k, t in final.items():
        diffs.append((k, worst(t.grad, tensor(one["d_" + k]))))
    top = max(diffs, key=lambda kv: kv[1])
    print(f"{name}: {len(diffs)} gradients, worst {top[0]} {top[1]:.2e}")
    if top[1] > 1e-10:
        bad.append(name)


def check_training(tr, bad):
    x, target = tensor(tr["x"]), tensor(tr["target"])
    for run in tr["runs"]:
        place, warm, lr = run["place"], run["warmup"], run["lr"]
        blocks, final = leaves(tr["stack"], place)
        params = [t for p in blocks for t in p.values()] + list(final.values())
        opt = torch.optim.Adam(params, lr=lr)
        losses = []
        for t in range(len(run["loss"])):
            loss = ((forward(x, blocks, final, tr["stack"], place) - target) ** 2).mean()
            losses.append(loss.item())
            if t == len(run["loss"]) - 1:
                break
            for group in opt.param_groups:
                group["lr"] = lr * (min(1.0, (t + 1) / warm) if warm else 1.0)
            opt.zero_grad()
            loss.backward()
            opt.step()
        rel = max(abs(a - b) / max(abs(b), 1e-12) for a, b in zip(losses, run["loss"]))
        print(f"training {place} warm-up {warm}: {len(losses)} losses, {losses[0]:.6f} -> {losses[-1]:.6f}, "
              f"worst relative difference {rel:.2e}")
        if rel > 1e-8:
            bad.append(f"training {place} warm-up {warm}")


def main():
    dump = json.load(open(sys.argv[1]))
    bad = []
    for one in dump["gradients"]:
        check_gradients(one, bad)
    check_training(dump["training"], bad)
    if bad:
        print("MISMATCH:", ", ".join(bad))
        return 1
    print("all agree with torch autograd")
    return 0


if __name__ == "__main__":
    sys.exit(main())
