#!/usr/bin/env python3
"""An independent check of `attn-explain positions --rope-scaling` and `--encoding t5` (issue 33).

RoPE scaling: for seeded random d_k, base, factor s, training length L and kind, the JSON's
measures.rope_scaling.inv_freq and attention_scale against Hugging Face transformers'
_compute_linear_scaling_rope_parameters / _compute_yarn_parameters (modeling_rope_utils.py)
written out here in torch as they are there (float32, as HF, to 2e-6 relative; and the same code
in float64 to 1e-9), NTK-aware as base·s^(d/(d−2)); and the long-range scores_before/after
recomputed with rotate_half / interleaved rotation of the JSON's own Q row 0 and K row 0.
T5: the JSON's buckets (every query i, key j of runs up to 300 tokens) against T5Attention.
_relative_position_bucket (transformers' modeling_t5.py) written out in torch, and the t5_bias
step against bucket_values[bucket].

Run as: rope_scaling_oracle.py ATTN_EXPLAIN [--count N]. Exit 1 on the first mismatch, 77 without torch.
"""
import json
import math
import random
import subprocess
import sys

try:
    import torch
except ImportError:
    print("torch not available: skipped")
    sys.exit(77)


# ---- Hugging Face transformers, modeling_rope_utils.py, as written there (config → arguments) ----
def hf_default_inv_freq(base, dim, dtype):
    return 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).to(dtype=dtype) / dim))


def hf_linear(base, dim, factor, dtype):
    inv_freq = hf_default_inv_freq(base, dim, dtype)
    inv_freq /= factor
    return inv_freq, 1.0


def hf_yarn(base, dim, factor, original_max_position_embeddings, dtype):
    def get_mscale(scale, mscale=1):
        if scale <= 1:
            return 1.0
        return 0.1 * mscale * math.log(scale) + 1.0

    attention_factor = get_mscale(factor)
    beta_fast = 32
    beta_slow = 1

    def find_correction_dim(num_rotations, dim, base, max_position_embeddings):
        return (dim * math.log(max_position_embeddings / (num_rotations * 2 * math.pi))) / (2 * math.log(base))

    def find_correction_range(low_rot, high_rot, dim, base, max_position_embeddings, truncate):
        low = find_correction_dim(low_rot, dim, base, max_position_embeddings)
        high = find_correction_dim(high_rot, dim, base, max_position_embeddings)
        if truncate:
            low = math.floor(low)
            high = math.ceil(high)
        return max(low, 0), min(high, dim - 1)

    def linear_ramp_factor(min, max, dim):
        if min == max:
            max += 0.001  # Prevent singularity
        linear_func = (torch.arange(dim, dtype=dtype) - min) / (max - min)
        ramp_func = torch.clamp(linear_func, 0, 1)
        return ramp_func

    pos_freqs = base ** (torch.arange(0, dim, 2).to(dtype=dtype) / dim)
    inv_freq_extrapolation = 1.0 / pos_freqs
    inv_freq_interpolation = 1.0 / (factor * pos_freqs)
    low, high = find_correction_range(beta_fast, beta_slow, dim, base, original_max_position_embeddings, True)
    inv_freq_extrapolation_factor = 1 - linear_ramp_factor(low, high, dim // 2).to(dtype=dtype)
    inv_freq = (
        inv_freq_interpolation * (1 - inv_freq_extrapolation_factor)
        + inv_freq_extrapolation * inv_freq_extrapolation_factor
    )
    return inv_freq, attention_factor


def reference(kind, base, dim, factor, length, dtype):
    if kind == "linear":
        return hf_linear(base, dim, factor, dtype)
    if kind == "yarn":
        return hf_yarn(base, dim, factor, length, dtype)
    ntk_base = base * factor ** (dim / (dim - 2))  # NTK-aware (bloc97)
    return hf_default_inv_freq(ntk_base, dim, dtype), 1.0


# ---- Hugging Face transformers, modeling_t5.py, T5Attention._relative_position_bucket ----
def relative_position_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    relative_buckets = 0
    if bidirectional:
        num_buckets //= 2
        relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
    else:
        relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    relative_position_if_large = max_exact + (
        torch.log(relative_position.float() / max_exact)
        / math.log(max_distance / max_exact)
        * (num_buckets - max_exact)
    ).to(torch.long)
    relative_position_if_large = torch.min(
        relative_position_if_large, torch.full_like(relative_position_if_large, num_buckets - 1)
    )
    relative_buckets += torch.where(is_small, relative_position, relative_position_if_large)
    return relative_buckets


def run(exe, args):
    out = subprocess.run([exe, "positions", "--no-pause", "--format", "json"] + args, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"attn-explain positions {' '.join(args)} failed: {out.stderr.strip()}")
    return json.loads(out.stdout)


def close(a, b, rel, what):
    if abs(a - b) > rel * max(abs(a), abs(b), 1e-300):
        raise SystemExit(f"MISMATCH {what}: ours {a!r}, reference {b!r}")


def rotate(x, pos, inv_freq, style):
    """x: (d,) float64, rotated to position pos with rotate_half (half) or interleaved pairs."""
    angles = pos * inv_freq
    cos, sin = torch.cos(angles), torch.sin(angles)
    if style == "half":
        x1, x2 = x[: x.shape[0] // 2], x[x.shape[0] // 2 :]
        return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos])
    a, b = x[0::2], x[1::2]
    out = torch.empty_like(x)
    out[0::2], out[1::2] = a * cos - b * sin, a * sin + b * cos
    return out


def check_scaling(exe, g, k):
    kind = g.choice(["linear", "ntk", "yarn"])
    d = g.choice([2, 4, 6, 8, 16, 32, 64, 128]) if kind != "ntk" else g.choice([4, 8, 16, 64, 128])
    base = g.choice([10000.0, 500000.0, 1e6, round(g.uniform(100, 20000), 1)])
    factor = g.choice([2.0, 4.0, 8.0, 16.0, 40.0, round(g.uniform(1.05, 64), 3)])
    length = g.choice([256, 2048, 4096, 8192, g.randint(16, 40000)])
    style = g.choice(["half", "interleaved"])
    args = ["--encoding", "rope", "--rope-scaling", kind, "--factor", repr(factor), "--original-len", str(length),
            "--d-k", str(d), "--d-model", str(max(d, 4)), "--seq-len", "3", "--rope-base", repr(base),
            "--rope-style", style, "--dtype", "float64", "--seed", str(k)]
    j = run(exe, args)
    s = j["measures"]["rope_scaling"]
    what = " ".join(args)
    if s["kind"] != kind or len(s["inv_freq"]) != d // 2:
        raise SystemExit(f"MISMATCH {what}: kind or length")
    ref32, att = reference(kind, base, d, factor, length, torch.float32)
    ref64, _ = reference(kind, base, d, factor, length, torch.float64)
    for i in range(d // 2):
        close(s["inv_freq"][i], float(ref32[i]), 2e-6, f"{what}: inv_freq[{i}] vs float32 HF")
        close(s["inv_freq"][i], float(ref64[i]), 1e-9, f"{what}: inv_freq[{i}] vs float64")
    close(s["attention_scale"], att if kind == "yarn" else 1.0, 1e-12, f"{what}: attention_scale")
    close(j["measures"]["thetas"][d // 2 - 1], float(hf_default_inv_freq(base, d, torch.float64)[-1]), 1e-12,
          f"{what}: thetas")
    steps = {st["id"]: st["data"] for st in j["steps"]}
    q, kk = torch.tensor(steps["Q"][0], dtype=torch.float64), torch.tensor(steps["K"][0], dtype=torch.float64)
    before = hf_default_inv_freq(base, d, torch.float64)
    after = torch.tensor(s["inv_freq"], dtype=torch.float64)
    a2 = s["attention_scale"] ** 2
    for t, delta in enumerate(s["distances"]):
        b = float(rotate(q, delta, before, style) @ rotate(kk, 0, before, style)) / math.sqrt(d)
        a = float(rotate(q, delta, after, style) @ rotate(kk, 0, after, style)) / math.sqrt(d) * a2
        scale = max(1.0, float(q.abs().sum() * kk.abs().sum()))
        if abs(b - s["scores_before"][t]) > 1e-9 * scale or abs(a - s["scores_after"][t]) > 1e-9 * scale:
            raise SystemExit(f"MISMATCH {what}: scores at distance {delta}")


def check_t5(exe, g, k):
    nb = g.choice([4, 6, 8, 16, 32, 32, 64, g.randint(4, 100)])
    md = g.choice([nb // 2 + 1, 20, 128, 128, g.randint(nb // 2 + 1, 400)])
    md = max(md, nb // 2 + 1)
    n = g.choice([3, 6, 40, g.randint(2, 300)])
    causal = g.random() < 0.5
    heads = g.randint(1, 3)
    args = ["--encoding", "t5", "--num-buckets", str(nb), "--max-distance", str(md), "--seq-len", str(n),
            "--heads", str(heads), "--mask", "causal" if causal else "none", "--seed", str(k), "--dtype", "float64"]
    j = run(exe, args)
    m = j["measures"]
    what = " ".join(args)
    pos = torch.arange(n, dtype=torch.long)
    rel = pos[None, :] - pos[:, None]  # memory_position − query_position
    ref = relative_position_bucket(rel, bidirectional=not causal, num_buckets=nb, max_distance=md)
    ours = torch.tensor(m["buckets"], dtype=torch.long)
    if m["bidirectional"] == causal or not torch.equal(ours, ref):
        raise SystemExit(f"MISMATCH {what}: buckets")
    values = torch.tensor(m["bucket_values"], dtype=torch.float64)  # (num_buckets, h)
    bias = values[ref].permute(2, 0, 1)
    step = torch.tensor([st["data"] for st in j["steps"] if st["id"] == "t5_bias"][0], dtype=torch.float64)
    if (bias - step).abs().max() > 1e-12:
        raise SystemExit(f"MISMATCH {what}: t5_bias")


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    exe = sys.argv[1]
    count = int(sys.argv[sys.argv.index("--count") + 1]) if "--count" in sys.argv else 40
    g = random.Random(33)
    for k in range(count):
        check_scaling(exe, g, k)
        check_t5(exe, g, k)
    # T5 offsets far past max_distance: the longest run (512 tokens) with a short max_distance
    for nb, md, causal in [(32, 128, False), (32, 128, True), (8, 20, False), (64, 33, True)]:
        args = ["--encoding", "t5", "--num-buckets", str(nb), "--max-distance", str(md), "--seq-len", "512",
                "--heads", "1", "--mask", "causal" if causal else "none"]
        m = run(exe, args)["measures"]
        pos = torch.arange(512, dtype=torch.long)
        ref = relative_position_bucket(pos[None, :] - pos[:, None], not causal, nb, md)
        if not torch.equal(torch.tensor(m["buckets"], dtype=torch.long), ref):
            raise SystemExit(f"MISMATCH {' '.join(args)}: buckets")
    print(f"OK: {count} RoPE scaling runs against HF's formulas, {count + 4} T5 runs against _relative_position_bucket")


if __name__ == "__main__":
    main()
