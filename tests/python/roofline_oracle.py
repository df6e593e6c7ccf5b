#!/usr/bin/env python3
"""An independent oracle for `attn-explain roofline --format json` (issue 30).

For seeded random models and machines it runs the binary, then recomputes from the JSON's own
"model", "hardware", "batch" and "context" every number of "phases", "ridge", "ttft_s", "tpot_s",
"variants" and "curve" with the formulas of the roofline model written out again here in plain
Python (exact integers where the C++ uses doubles of integers), and compares them:

  a matmul of t tokens: 2·t·in·out FLOPs, in·out weights read once a pass, t·(in + out) activations
  attention  W_Q d→h·d_h, W_K d→g·d_h, W_V d→g·d_h, W_O h·d_h→d
  MLA        W_Q d→h·(d_h + d_r), W_DKV d→d_c + d_r, W_UK d_c→h·d_h, W_UV d_c→h·d_v, W_O h·d_v→d
  MLP        gelu: up, down; swiglu: gate, up, down (d ↔ d_ff)
  LM head    d→V once a sequence (2·d·V FLOPs, d + V activations); embeddings: t·d weight bytes read
  attention FLOPs of q new tokens after c cached, pairs = q·c + q·(q+1)/2, per layer:
     standard 4·h·pairs·d_h; MLA decode (q = 1) 2·h·pairs·(2·d_c + d_r); MLA prefill
     2·c·d_c·h·(d_h + d_v) + 2·h·pairs·(d_h + d_r + d_v)
  KV a token: standard L·2·g·d_h·e (+ int8: L·2·g·4), MLA L·(d_c + d_r)·e (+ int8: L·4)
  time = max(FLOPs / peak, bytes / bandwidth); bound "compute" when FLOPs / peak ≥ bytes / bandwidth
  max batch = ⌊(memory − weight bytes) / (kv a token · T)⌋, 0 when nothing fits

Run as: roofline_oracle.py ATTN_EXPLAIN [--count N]. Exit 1 on the first mismatch (printed).
"""
import json
import math
import random
import subprocess
import sys

BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "fp8": 1}
KV_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "fp8": 1, "int8": 1}
HARDWARE = {  # the datasheet peaks the binary claims, checked against its own "hardware" too
    "a100-sxm": {"float32": 19.5e12, "bf16": 312e12, "fp8": 0, "bw": 2.039e12, "mem": 80e9},
    "h100-sxm": {"float32": 67e12, "bf16": 989e12, "fp8": 1979e12, "bw": 3.35e12, "mem": 80e9},
    "h200-sxm": {"float32": 67e12, "bf16": 989e12, "fp8": 1979e12, "bw": 4.8e12, "mem": 141e9},
    "l4": {"float32": 30.3e12, "bf16": 121e12, "fp8": 242e12, "bw": 0.3e12, "mem": 24e9},
}


def matmuls(m):
    """One layer's matmuls as (in, out)."""
    d, h, dh = m["d_model"], m["heads"], m["d_head"]
    if m["kv_latent"] > 0:
        dc, dr, dv = m["kv_latent"], m["rope_dim"], m["d_v"]
        attention = [(d, h * (dh + dr)), (d, dc + dr), (dc, h * dh), (dc, h * dv), (h * dv, d)]
    else:
        g = m["kv_heads"]
        attention = [(d, h * dh), (d, g * dh), (d, g * dh), (h * dh, d)]
    gate_up = [(d, m["d_ff"])] * (2 if m["mlp"] == "swiglu" else 1)
    return attention + gate_up + [(m["d_ff"], d)]


def params(m):
    layer = sum(i * o for i, o in matmuls(m))
    table = m["vocab"] * m["d_model"]
    return m["layers"] * layer + table * (1 if m["tie_embeddings"] else 2)


def kv_per_token(m):
    L, e = m["layers"], KV_BYTES[m["kv_dtype"]]
    int8 = m["kv_dtype"] == "int8"
    if m["kv_latent"] > 0:
        return L * (m["kv_latent"] + m["rope_dim"]) * e + (L * 4 if int8 else 0)
    g, dh = m["kv_heads"], m["d_head"]
    return L * 2 * g * dh * e + (L * 2 * g * 4 if int8 else 0)


def attention_flops(m, q, c):
    pairs = q * c + q * (q + 1) // 2
    h, dh = m["heads"], m["d_head"]
    if m["kv_latent"] == 0:
        return 4 * h * pairs * dh
    dc, dr, dv = m["kv_latent"], m["rope_dim"], m["d_v"]
    if q == 1:
        return 2 * h * pairs * (dc + dr) + 2 * h * pairs * dc
    return 2 * c * dc * h * (dh + dv) + 2 * h * pairs * (dh + dr) + 2 * h * pairs * dv


def cost(m, batch, q, c):
    L, d, V = m["layers"], m["d_model"], m["vocab"]
    wb, ab = BYTES[m["dtype"]], max(BYTES[m["dtype"]], 2)
    layer = sum(i * o for i, o in matmuls(m))
    widths = sum(i + o for i, o in matmuls(m))
    tokens = batch * q
    kv = kv_per_token(m)
    parts = {
        "linear_flops": 2 * tokens * L * layer + 2 * batch * d * V,
        "attention_flops": batch * L * attention_flops(m, q, c),
        "weight_bytes": (L * layer + V * d) * wb + tokens * d * wb,
        "kv_read_bytes": batch * c * kv,
        "kv_write_bytes": batch * q * kv,
        "activation_bytes": tokens * L * widths * ab + batch * (d + V) * ab,
    }
    flops = parts["linear_flops"] + parts["attention_flops"]
    nbytes = parts["weight_bytes"] + parts["kv_read_bytes"] + parts["kv_write_bytes"] + parts["activation_bytes"]
    return parts, flops, nbytes


def timing(flops, nbytes, peak, bw):
    compute, memory = flops / peak, nbytes / bw
    return max(compute, memory), "compute" if compute >= memory else "memory", compute, memory


def close(a, b, what, rel=1e-9):
    if not math.isclose(float(a), float(b), rel_tol=rel, abs_tol=1e-300):
        raise AssertionError(f"{what}: the binary says {a}, the oracle {b}")


def check(j):
    m, hw = j["model"], j["hardware"]
    B, T = j["batch"], j["context"]
    peak, bw, mem = hw["peak_flops"], hw["bandwidth"], hw["memory"]
    if hw["name"] in HARDWARE:
        ref = HARDWARE[hw["name"]]
        close(peak, ref["fp8"] if m["dtype"] == "fp8" else ref["float32"] if m["dtype"] == "float32" else ref["bf16"], "peak")
        close(bw, ref["bw"], "bandwidth")
    close(m["params"], params(m), "params")
    close(m["weight_bytes"], params(m) * BYTES[m["dtype"]], "weight_bytes")
    close(m["kv_bytes_per_token"], kv_per_token(m), "kv_bytes_per_token")
    close(j["ridge"], peak / bw, "ridge")
    for phase, q, c in (("prefill", T, 0), ("decode", 1, T)):
        parts, flops, nbytes = cost(m, B, q, c)
        p = j["phases"][phase]
        for k, v in parts.items():
            close(p["parts"][k], v, f"{phase} {k}")
        close(p["flops"], flops, f"{phase} flops")
        close(p["bytes"], nbytes, f"{phase} bytes")
        close(p["intensity"], flops / nbytes, f"{phase} intensity")
        t, bound, compute, memory = timing(flops, nbytes, peak, bw)
        close(p["time_s"], t, f"{phase} time_s")
        close(p["compute_s"], compute, f"{phase} compute_s")
        close(p["memory_s"], memory, f"{phase} memory_s")
        if p["bound"] != bound:
            raise AssertionError(f"{phase} bound: the binary says {p['bound']}, the oracle {bound}")
    close(j["ttft_s"], j["phases"]["prefill"]["time_s"], "ttft_s")
    close(j["tpot_s"], j["phases"]["decode"]["time_s"], "tpot_s")
    models = {}
    for v in j["variants"]:
        vm = dict(m, kv_heads=v["kv_heads"], kv_latent=v["kv_latent"], rope_dim=v["rope_dim"], d_v=v["d_v"],
                  kv_dtype=v["kv_dtype"])
        models[v["name"]] = vm
        if not v["name"].split()[0] in ("MHA", "GQA", "MQA", "MLA"):
            raise AssertionError(f"variant name {v['name']}")
        close(v["kv_bytes_per_token"], kv_per_token(vm), f"{v['name']} kv_bytes_per_token")
        free = mem - params(vm) * BYTES[m["dtype"]]
        fits = 0 if free <= 0 else math.floor(free / (kv_per_token(vm) * T))
        if v["max_batch"] != fits:
            raise AssertionError(f"{v['name']} max_batch: the binary says {v['max_batch']}, the oracle {fits}")
        _, flops, nbytes = cost(vm, B, 1, T)
        t, bound, _, _ = timing(flops, nbytes, peak, bw)
        close(v["decode_time_s"], t, f"{v['name']} decode_time_s")
        close(v["tokens_per_s"], B / t, f"{v['name']} tokens_per_s")
        if v["bound"] != bound:
            raise AssertionError(f"{v['name']} bound")
    names = [v["name"] for v in j["variants"]]
    if names[0] != "MHA" or "MQA" not in names or not any(n.startswith("MLA") for n in names):
        raise AssertionError(f"variants {names}")
    for name, row in zip(j["curve"]["variants"], j["curve"]["decode_time_s"]):
        for ctx, s in zip(j["curve"]["contexts"], row):
            _, flops, nbytes = cost(models[name], B, 1, int(ctx))
            close(s, timing(flops, nbytes, peak, bw)[0], f"curve {name} at {ctx}")
    return len(j["variants"])


def random_args(rng):
    heads = rng.choice([1, 2, 4, 8, 12, 16, 32, 64])
    d_head = rng.choice([16, 32, 64, 128])
    args = ["--layers", rng.randint(1, 80), "--d-model", heads * d_head * rng.choice([1, 1, 2]), "--heads", heads,
            "--d-head", d_head, "--vocab", rng.choice([1000, 32000, 128256]), "--mlp", rng.choice(["gelu", "swiglu"]),
            "--batch", rng.choice([1, 2, 8, 64, 512]), "--context", rng.choice([1, 7, 128, 4096, 32768])]
    if rng.random() < 0.5:
        args += ["--d-ff", rng.randint(64, 20000)]
    divisors = [g for g in range(1, heads + 1) if heads % g == 0]
    mla = rng.random() < 0.25
    if mla:
        args += ["--kv-latent", rng.choice([64, 256, 512]), "--rope-dim", rng.choice([0, 32, 64])]
    elif rng.random() < 0.6:
        args += ["--kv-heads", rng.choice(divisors)]
    if rng.random() < 0.3:
        args += ["--tie-embeddings"]
    dtype = rng.choice(["float32", "float16", "bfloat16", "fp8"])
    args += ["--dtype", dtype]
    if rng.random() < 0.5:
        args += ["--kv-dtype", rng.choice(["float16", "bfloat16", "fp8", "int8"])]
    hw = rng.choice(["h100-sxm", "h200-sxm", "l4", "a100-sxm", "custom"])
    if hw == "a100-sxm" and dtype == "fp8":
        hw = "h100-sxm"
    if hw == "custom":
        args += ["--peak-flops", rng.choice([50, 400, 2000]), "--bandwidth", rng.choice([100, 1600, 8000])]
    else:
        args += ["--hw", hw]
    if rng.random() < 0.4:
        args += ["--memory", rng.choice([1, 24, 80, 640])]
    return [str(a) for a in args]


def main():
    exe = sys.argv[1]
    count = int(sys.argv[sys.argv.index("--count") + 1]) if "--count" in sys.argv else 40
    rng = random.Random(30)
    checked = 0
    fixed = [["--hw", "h100-sxm", "--layers", "32", "--d-model", "4096", "--heads", "32", "--d-ff", "11008",
              "--dtype", "float16", "--batch", "1", "--context", "4096"]]
    for k in range(count):
        args = fixed[k] if k < len(fixed) else random_args(rng)
        r = subprocess.run([exe, "roofline", *args, "--format", "json"], capture_output=True, text=True)
        line = "attn-explain roofline " + " ".join(args)
        if r.returncode != 0:
            # A refusal is one line (e.g. sizes over 10^15 parameters); anything else is a failure.
            if r.stderr.count("\n") != 1 or r.returncode not in (1, 2):
                print(f"FAIL {line}\n{r.stderr}")
                return 1
            continue
        try:
            rows = check(json.loads(r.stdout))
        except AssertionError as e:
            print(f"FAIL {line}\n  {e}")
            return 1
        checked += 1
        print(f"ok {line} ({rows} variants)")
    if checked < count // 2:
        print(f"FAIL only {checked} of {count} runs were checked")
        return 1
    print(f"all {checked} runs match the oracle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
