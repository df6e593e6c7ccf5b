#!/usr/bin/env python3
"""The random sweep (#24, "a net under it"): every computing command over random valid flags.

For each command of COMMANDS (one table: the command, how to draw its flags, and whether it writes a
`--format python` transcript), draws seeded random flag sets at small sizes (n != m, h != g,
W < prompt, dilated and block masks, float64, ...) until RUNS of them are accepted. A drawn set the
tool refuses must be refused with one line on stderr and exit 1 or 2; anything else (a crash, an
abort, a hang, a traceback) fails. An accepted run of a command with a transcript writes it with
--format python, and every transcript runs in THIS Python process (one torch import:
tests/python/transcripts.py) and must reproduce its own numbers ("all N steps match"). The others
write --format json, which must parse.

Usage: sweep.py ATTN_EXE [--seed S] [--runs N]   (exit 77 = skipped: no torch in this python)
"""
import argparse
import json
import os
import random
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

try:
    import torch  # noqa: F401
except ImportError:
    print("skipped: torch is not importable by", sys.executable)
    sys.exit(77)

import transcripts  # noqa: E402

# ---- flag generators: each takes a random.Random and returns the command line after the command.


def pattern(r, n, m=None, causal_ok=True):
    """A mask spec over n queries (and m keys): none, causal or a sparse pattern of small sizes."""
    kinds = ["none", "window", "local", "global", "dilated", "block", "bigbird"] + (["causal"] if causal_ok else [])
    k = r.choice(kinds)
    if k in ("none", "causal"):
        return k
    if k == "window":
        return f"window:{r.randint(1, max(1, n - 1))}"  # W < n
    if k == "local":
        return f"local:{r.randint(0, 3)}"
    if k == "global":
        return f"global:{r.randint(1, 2)},{r.randint(0, 3)}"
    if k == "dilated":
        return f"dilated:{r.randint(1, 4)},{r.randint(1, 3)}"
    if k == "block":
        return f"block:{r.randint(1, 4)}"
    return f"bigbird:{r.randint(1, 3)},{r.randint(0, 2)},{r.randint(0, 2)}"


def dtype(r):
    return ["--dtype", r.choice(["float32", "float64"])]


def seed(r):
    return ["--seed", str(r.randint(0, 10 ** 6))]


def single_head(r, cross=True, rope=True):
    n = r.randint(1, 6)
    d_k = r.randint(1, 6)
    args = ["--seq-len", str(n), "--d-model", str(r.randint(1, 8)), "--d-k", str(d_k), "--d-v",
            str(r.randint(1, 6))] + dtype(r) + seed(r) + ["--init", r.choice(["randn", "xavier"])]
    m = n
    if cross and r.random() < 0.4:
        m = r.choice([x for x in range(1, 8) if x != n])  # n != m
        args += ["--kv-len", str(m), "--align", r.choice(["top-left", "bottom-right"])]
    args += ["--mask", pattern(r, n, m)]
    if rope and m == n and d_k % 2 == 0 and r.random() < 0.4:
        args += ["--rope", "--rope-style", r.choice(["half", "interleaved"])]
    return args


def gen_step(r):
    return single_head(r)


def gen_heads(r):
    h = r.randint(1, 4)
    n = r.randint(1, 6)
    d_head = r.randint(1, 3)
    args = ["--seq-len", str(n), "--heads", str(h), "--d-model", str(h * d_head)] + dtype(r) + seed(r)
    args += ["--init", r.choice(["randn", "xavier"])]
    b = r.randint(1, 3)
    m = n
    if r.random() < 0.3:
        m = r.choice([x for x in range(1, 8) if x != n])
        args += ["--kv-len", str(m), "--align", r.choice(["top-left", "bottom-right"])]
    if b > 1 or r.random() < 0.3:
        args += ["--batch", str(b), "--lengths", ",".join(str(r.randint(1, m)) for _ in range(b)),
                 "--pad-side", r.choice(["right", "left"])]
    args += ["--mask", pattern(r, n, m)]
    if r.random() < 0.4:
        args.append("--bias")
    if d_head % 2 == 0 and r.random() < 0.5:
        args += ["--rope", "--rope-style", r.choice(["half", "interleaved"])]
    return args


MISTAKES = []


# The mistakes that run multi-head attention (they take --heads and --batch; the others refuse them).
MULTI_HEAD_MISTAKES = {"heads-no-transpose", "merge-no-transpose", "scale-by-d-model", "missing-output-projection"}


def gen_mistake(r):
    mid = r.choice(MISTAKES)
    h = r.randint(1, 3)
    args = [mid, "--seq-len", str(r.randint(2, 6)), "--d-model", str(h * r.randint(1, 3)), "--d-k",
            str(r.randint(1, 6)), "--d-v", str(r.randint(1, 6))] + dtype(r) + seed(r)
    if mid in MULTI_HEAD_MISTAKES:
        args += ["--heads", str(h), "--batch", str(r.randint(1, 2))]
    if r.random() < 0.5:
        args += ["--mask", r.choice(["none", "causal"])]
    return args


def gen_grad(r):
    return single_head(r, cross=False, rope=False) + ["--loss", r.choice(["mse", "sum"])]


def gen_kvcache(r):
    g = r.choice([1, 2])
    h = g * r.choice([1, 2, 3])  # h != g most of the time
    rope = r.random() < 0.3
    d_head = r.choice([2, 4]) if rope else r.randint(1, 4)
    p, t = r.randint(1, 6), r.randint(1, 5)
    args = ["--prompt-len", str(p), "--steps", str(t), "--heads", str(h), "--kv-heads", str(g), "--d-model",
            str(h * d_head)] + dtype(r) + seed(r)
    if r.random() < 0.6:
        w = r.randint(1, p - 1) if p > 1 and r.random() < 0.6 else r.randint(1, p + t)  # often W < prompt
        args += ["--mask", f"window:{w}"]
    if rope:
        args += ["--rope", "--rope-style", r.choice(["half", "interleaved"])]
    return args


def gen_mask(r):
    n = r.randint(1, 8)
    args = ["--seq-len", str(n), "--layers", str(r.randint(1, 6))] + seed(r)
    m = n
    if r.random() < 0.4:
        m = r.choice([x for x in range(1, 9) if x != n])
        args += ["--kv-len", str(m), "--align", r.choice(["top-left", "bottom-right"])]
    if r.random() < 0.5:
        b = r.randint(1, 3)
        args += ["--lengths", ",".join(str(r.randint(1, m)) for _ in range(b)), "--pad-side",
                 r.choice(["right", "left"])]
    return args + ["--mask", pattern(r, n, m)]


def gen_positions(r):
    enc = r.choice(["none", "sinusoidal", "learned", "rope", "alibi"])
    d_k = 2 * r.randint(1, 4)
    args = ["--encoding", enc, "--seq-len", str(r.randint(1, 8)), "--d-model", str(r.randint(1, 8)), "--d-k",
            str(d_k), "--mask", r.choice(["none", "causal"]), "--init", r.choice(["randn", "xavier"])]
    args += dtype(r) + seed(r)
    if enc == "rope":
        args += ["--rope-style", r.choice(["half", "interleaved"]), "--shift", str(r.randint(0, 4))]
    if enc == "alibi":
        args += ["--heads", str(r.randint(1, 8))]
    return args


def gen_variant(r):
    kind = r.choice(["linear", "performer", "linformer", "additive", "mla"])
    n = r.randint(2, 8)
    args = [kind, "--seq-len", str(n), "--d-model", str(r.randint(2, 8)), "--d-k", str(r.randint(1, 6)), "--d-v",
            str(r.randint(1, 6))] + dtype(r) + seed(r) + ["--init", r.choice(["randn", "xavier"])]
    if kind == "performer":
        args += ["--features", str(r.randint(1, 32))]
    if kind == "linformer":
        args += ["--rank", str(r.randint(1, n))]
    if kind == "mla":
        args += ["--heads", str(r.randint(1, 3)), "--latent", str(r.randint(1, 6)), "--rope-dim",
                 str(2 * r.randint(1, 2))]
    if r.random() < 0.6 and kind in ("linear", "additive", "mla"):
        args += ["--mask", r.choice(["none", "causal"])]
    return args


def gen_flash(r):
    n = r.randint(1, 9)
    return ["--seq-len", str(n), "--d-model", str(r.randint(1, 6)), "--d-k", str(r.randint(1, 6)), "--d-v",
            str(r.randint(1, 6)), "--block-q", str(r.randint(1, 5)), "--block-k", str(r.randint(1, 5)), "--row",
            str(r.randint(0, n - 1)), "--mask", pattern(r, n)] + dtype(r) + seed(r)


def gen_batching(r):
    args = ["--batch", str(r.randint(1, 6)), "--heads", str(r.choice([1, 2, 4])), "--d-model",
            str(r.choice([8, 16, 64]))] + seed(r)
    if r.random() < 0.5:
        args += ["--lengths", ",".join(str(r.randint(1, 40)) for _ in range(r.randint(1, 12)))]
    else:
        args += ["--dist", r.choice(["uniform:1,40", "lognormal:2,0.5"]), "--count", str(r.randint(1, 24))]
    if r.random() < 0.3:
        args += ["--buckets", "8,16,32"]
    return args


def gen_paged(r):
    n = r.randint(1, 4)
    prompts = [r.randint(1, 10) for _ in range(n)]
    g = r.choice([1, 2])
    h = g * r.choice([1, 2])
    args = ["--block-size", str(r.randint(1, 6)), "--requests",
            ",".join(f"{p}+{r.randint(0, 8)}" for p in prompts), "--shared-prefix",
            str(r.randint(0, min(prompts))), "--samples", str(r.randint(1, 3)), "--heads", str(h), "--kv-heads",
            str(g), "--d-model", str(h * r.randint(1, 4))] + dtype(r) + seed(r)
    if r.random() < 0.5:
        args += ["--blocks", str(r.randint(1, 12))]
    if r.random() < 0.3:
        args += ["--follow", str(r.randint(0, n))]
    return args


def gen_cost(r):
    g = r.choice([1, 2, 4])
    h = g * r.choice([1, 2, 4])
    args = ["--batch", str(r.randint(1, 4)), "--seq-len", str(r.randint(1, 64)), "--heads", str(h), "--kv-heads",
            str(g), "--d-model", str(h * r.randint(1, 8)), "--layers", str(r.randint(1, 4)), "--dtype",
            r.choice(["float32", "float16", "bfloat16"])]
    if r.random() < 0.3:
        args += ["--kv-latent", str(r.randint(1, 16)), "--rope-dim", str(2 * r.randint(0, 2))]
    if r.random() < 0.5:
        args += ["--mask", pattern(r, 16)]
    if r.random() < 0.3:  # a quantized cache (refused with --kv-latent, in one line)
        args += ["--kv-dtype", r.choice(["float16", "bfloat16", "fp8", "int8"])]
    return args


def gen_train(r):
    args = ["--seq-len", str(r.randint(1, 5)), "--d-model", str(r.randint(1, 6)), "--d-k", str(r.randint(1, 6)),
            "--d-v", str(r.randint(1, 6)), "--steps", str(r.randint(1, 20)), "--lr",
            str(r.choice([0.001, 0.01, 0.1]))] + seed(r)
    if r.random() < 0.5:
        args += ["--mask", r.choice(["none", "causal", "window:2", "block:2"])]
    if r.random() < 0.3:
        args += ["--mistake", r.choice(["random-target", "no-scale", "no-zero-grad"])]
    return args


def gen_learn(r):
    args = ["--task", r.choice(["previous", "reverse", "max", "induction"]), "--steps", str(r.randint(1, 20))]
    args += seed(r) if r.random() < 0.5 else []
    if r.random() < 0.5:
        args += ["--heads", str(r.randint(1, 2)), "--d-model", str(4 * r.randint(1, 4))]
    if r.random() < 0.3:
        args += ["--no-scale"]
    return args


def gen_block(r):
    d = r.choice([1, 2, 3, 4, 6, 8, 12, 16])
    args = ["--seq-len", str(r.randint(1, 7)), "--d-model", str(d), "--heads", str(r.choice([1, 2, 3, 4])),
            "--norm", r.choice(["pre", "post"]), "--norm-type", r.choice(["layernorm", "rmsnorm"]), "--mlp",
            r.choice(["gelu", "swiglu"]), "--arch", r.choice(["decoder", "encoder"])] + dtype(r) + seed(r)
    if r.random() < 0.3:  # d_ff given (0 is refused in one line)
        args += ["--d-ff", str(r.randint(0, 20))]
    return args


# The computing commands: (command, flag generator, writes a --format python transcript).
COMMANDS = [
    ("step", gen_step, True),
    ("heads", gen_heads, True),
    ("mistake", gen_mistake, True),
    ("mask", gen_mask, False),
    ("positions", gen_positions, False),
    ("variant", gen_variant, False),
    ("kv-cache", gen_kvcache, True),
    ("flash", gen_flash, False),
    ("grad", gen_grad, True),
    ("batching", gen_batching, False),
    ("paged", gen_paged, True),
    ("cost", gen_cost, False),
    ("train", gen_train, False),
    ("learn", gen_learn, False),
    ("block", gen_block, True),
]


def run_tool(exe, args):
    try:
        r = subprocess.run([exe] + args, capture_output=True, text=True, timeout=60,
                           env=dict(os.environ, ATTN_EXPLAIN_LANG="en"))
        return r.returncode, r.stdout, r.stderr
    except subprocess.TimeoutExpired:
        return "timeout", "", ""


def judge(cmd, python, args, code, out, err):
    """(accepted, problem): a refusal is one line and exit 1 or 2; an accepted run parses."""
    line = " ".join([cmd] + args)
    if code in (1, 2):
        lines = [x for x in err.splitlines() if x.strip()]
        # With --format json a refusal is also {"error": …} on stdout (#26: JSON on every exit code).
        json_error = False
        if out.strip():
            try:
                json_error = list(json.loads(out)) == ["error"]
            except ValueError:
                pass
        if len(lines) != 1 or (out.strip() and not json_error):
            return False, f"{line}: refused (exit {code}) with {len(lines)} stderr lines: {err[-400:]!r}"
        return False, None
    if code != 0:
        return False, f"{line}: exit {code}: {err[-800:]}"
    if python:
        return True, None
    try:
        json.loads(out)
    except ValueError as e:
        return True, f"{line}: --format json does not parse: {e}"
    return True, None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("exe")
    ap.add_argument("--seed", type=int, default=24)
    ap.add_argument("--runs", type=int, default=50, help="accepted configurations per command")
    a = ap.parse_args()
    start = time.time()
    out = subprocess.run([a.exe, "mistakes"], capture_output=True, text=True, check=True).stdout
    MISTAKES.extend(re.findall(r"^  ([a-z0-9]+(?:-[a-z0-9]+)+) ", out, re.M))
    if len(MISTAKES) < 20:
        raise SystemExit(f"FAIL: only {len(MISTAKES)} mistake ids parsed from `attn-explain mistakes`")
    failures, transcripts_run = [], 0
    for cmd, gen, python in COMMANDS:
        r = random.Random(f"{a.seed}-{cmd}")
        accepted, drawn, refused = 0, 0, 0
        t0 = time.time()
        with ThreadPoolExecutor(max_workers=2) as pool:
            while accepted < a.runs and drawn < 8 * a.runs:
                batch = [gen(r) for _ in range(min(2 * (a.runs - accepted), 8 * a.runs - drawn))]
                drawn += len(batch)
                fmt = ["--format", "python" if python else "json"]
                results = list(pool.map(lambda args: run_tool(a.exe, [cmd] + args + fmt), batch))
                for args, (code, stdout, stderr) in zip(batch, results):
                    if accepted >= a.runs:
                        break
                    ok, problem = judge(cmd, python, args, code, stdout, stderr)
                    if problem:
                        failures.append(problem)
                    if not ok:
                        refused += not problem
                        continue
                    accepted += 1
                    if python:
                        c, o = transcripts.run_in_process(stdout, " ".join([cmd] + args))
                        transcripts_run += 1
                        bad = transcripts.problem(c, o)
                        if bad:
                            failures.append(f"{cmd} {' '.join(args)} --format python: {bad}")
        if accepted < a.runs:
            failures.append(f"{cmd}: only {accepted} of {drawn} drawn flag sets were accepted (want {a.runs})")
        print(f"{'ok' if accepted >= a.runs else 'FAIL'} {cmd}: {accepted} runs ({refused} refused drawn sets)"
              f"{', transcripts reproduce' if python else ', JSON parses'} in {time.time() - t0:.1f} s")
    for f in failures[:40]:
        print("FAIL", f)
    print(f"{len(COMMANDS)} commands, {transcripts_run} transcripts in one process, {len(failures)} failure(s), "
          f"{time.time() - start:.1f} s; torch {torch.__version__}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
