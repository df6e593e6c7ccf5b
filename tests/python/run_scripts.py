#!/usr/bin/env python3
"""`--format python` under PyTorch: generates the script of every run in a matrix (single head with
and without a mask, float64, cross-attention with both alignments, d_k != d_v, heads with biases,
padding, causal cross-attention, RoPE, every mistake id of `attn-explain mistakes`, grad (with QK-norm and the soft cap), kv-cache with GQA
and MQA, kv-cache --mask window:W for every W from 1 to T, paged with sharing, samples and preemption, block) and runs each with this interpreter;
every script must exit 0 and end with "all N steps match". A script whose
embedded value is changed must exit 1 with MISMATCH (the check can fail). And the JSON contract:
for a few runs each step's `pytorch` string, exec'd with only torch, math, F, the inputs and the
dimension names, leaves the step's data in its variable; the same for `positions --encoding E`
(every encoding, --mask none and causal, float32 and float64, inputs given with --load). And
`flash --dtype float32` with large scores is as accurate as PyTorch's float32 attention.

Usage: run_scripts.py ATTN_EXE    (exit 77 = skipped: this python cannot import torch)
       run_scripts.py ATTN_EXE --blas    the float32 scripts at d = 64 and 128 under every BLAS
                                         library installed (Debian's reference BLAS, OpenBLAS, BLIS)
"""
import contextlib
import io
import re
import subprocess
import sys
import tempfile
import traceback

try:
    import torch  # noqa: F401
except ImportError:
    print("skipped: torch is not importable by", sys.executable)
    sys.exit(77)

EXE = sys.argv[1]

RUNS = [
    ["step"],
    ["step", "--mask", "causal"],
    ["step", "--mask", "causal", "--dtype", "float64"],
    ["step", "--seq-len", "16", "--d-model", "64", "--d-k", "64", "--mask", "causal"],
    ["step", "--kv-len", "5", "--mask", "causal", "--align", "top-left"],
    ["step", "--kv-len", "5", "--mask", "causal", "--align", "bottom-right"],
    ["step", "--seq-len", "5", "--kv-len", "3", "--mask", "causal", "--align", "bottom-right"],
    ["step", "--kv-len", "4", "--dtype", "float64"],
    ["step", "--d-k", "3", "--d-v", "6", "--mask", "causal"],
    ["step", "--tokens", "the cat sat on", "--seq-len", "4", "--init", "xavier"],
    ["heads"],
    ["heads", "--bias"],
    ["heads", "--bias", "--mask", "causal", "--dtype", "float64"],
    ["heads", "--batch", "2", "--lengths", "4,2", "--mask", "causal"],
    ["heads", "--batch", "2", "--lengths", "4,2", "--pad-side", "left"],
    ["heads", "--batch", "3", "--lengths", "4,1,3", "--pad-side", "left", "--mask", "causal"],
    ["heads", "--kv-len", "6", "--mask", "causal", "--align", "top-left"],
    ["heads", "--kv-len", "6", "--mask", "causal", "--align", "bottom-right"],
    ["heads", "--kv-len", "6", "--batch", "2", "--lengths", "6,3", "--mask", "causal", "--bias"],
    ["heads", "--seq-len", "12", "--d-model", "64", "--heads", "4", "--init", "randn"],
    ["step", "--rope", "--mask", "causal"],
    ["step", "--rope", "--rope-style", "interleaved", "--dtype", "float64"],
    ["heads", "--rope", "--mask", "causal", "--batch", "2", "--lengths", "4,3"],
    ["heads", "--rope", "--rope-style", "interleaved"],
    # logit control (#31): QK-norm (RMSNorm written out by hand) and soft-capping
    ["step", "--qk-norm"],
    ["step", "--qk-norm", "--rope", "--mask", "causal", "--dtype", "float64"],
    ["step", "--softcap", "0.5", "--mask", "causal"],
    ["step", "--softcap", "2.5", "--qk-norm", "--d-model", "16", "--d-k", "8", "--dtype", "float64"],
    ["step", "--softcap", "1", "--kv-len", "5", "--mask", "causal", "--align", "bottom-right"],
    ["step", "--softcap", "1", "--seq-len", "8", "--mask", "window:3", "--qk-norm"],
    ["heads", "--qk-norm", "--rope", "--mask", "causal", "--batch", "2", "--lengths", "4,2", "--dtype", "float64"],
    ["heads", "--softcap", "0.5", "--mask", "causal", "--batch", "2", "--lengths", "4,3"],
    ["heads", "--softcap", "1", "--qk-norm", "--kv-len", "6", "--mask", "causal", "--bias"],
    # sparse patterns (#14): the printed pattern expressions, SDPA's and MHA's masks
    ["step", "--seq-len", "8", "--mask", "window:3"],
    ["step", "--seq-len", "8", "--mask", "local:1", "--dtype", "float64"],
    ["step", "--seq-len", "8", "--mask", "global:1,1"],
    ["step", "--seq-len", "9", "--mask", "dilated:3,2"],
    ["step", "--seq-len", "8", "--mask", "block:4"],
    ["step", "--seq-len", "12", "--mask", "bigbird:2,1,1"],
    ["heads", "--seq-len", "8", "--mask", "window:3", "--batch", "2", "--lengths", "8,5"],
    ["heads", "--seq-len", "12", "--mask", "bigbird:2,1,1"],
    ["heads", "--seq-len", "8", "--mask", "local:2", "--batch", "2", "--lengths", "8,6", "--pad-side", "left"],
    ["grad", "--seq-len", "6", "--mask", "window:2"],
    ["grad"],
    ["grad", "--mask", "causal", "--loss", "sum"],
    ["grad", "--mask", "causal", "--dtype", "float64"],
    ["grad", "--d-k", "3", "--d-v", "5"],
    # grad through logit control (#31): the scales g_q, g_k as leaves, autograd through tanh and RMSNorm
    ["grad", "--qk-norm"],
    ["grad", "--softcap", "0.5", "--loss", "sum"],
    ["grad", "--qk-norm", "--softcap", "1.5", "--mask", "causal", "--dtype", "float64"],
    ["grad", "--qk-norm", "--softcap", "2", "--seq-len", "6", "--mask", "window:2", "--d-k", "3", "--d-v", "5"],
    ["kv-cache"],
    ["kv-cache", "--heads", "8", "--kv-heads", "2", "--d-model", "16"],
    ["kv-cache", "--heads", "4", "--kv-heads", "1", "--dtype", "float64"],
    ["kv-cache", "--rope", "--heads", "4", "--kv-heads", "2"],
    ["kv-cache", "--mask", "window:2"],
    ["kv-cache", "--sinks", "2", "--mask", "window:3", "--prompt-len", "7", "--steps", "5", "--rope"],
    ["kv-cache", "--sinks", "1", "--mask", "window:2", "--heads", "4", "--kv-heads", "2", "--rope", "--rope-style",
     "interleaved", "--dtype", "float64"],
    ["kv-cache", "--sinks", "3", "--mask", "window:1", "--prompt-len", "2", "--steps", "6"],
    # kv-cache --evict (#34): the script replays H2O and SnapKV per K/V head and checks the kept sets
    ["kv-cache", "--evict", "h2o", "--budget", "6", "--heads", "4", "--kv-heads", "2", "--steps", "3"],
    ["kv-cache", "--evict", "h2o", "--budget", "5", "--recent", "0", "--rope", "--rope-style", "interleaved",
     "--dtype", "float64"],
    ["kv-cache", "--evict", "snapkv", "--budget", "8", "--observe", "3", "--pool", "5", "--heads", "4", "--kv-heads",
     "1", "--rope"],
    ["mistake", "linear-weight-layout", "--d-k", "3"],
    ["mistake", "no-transpose", "--seq-len", "4"],
    ["mistake", "heads-no-transpose", "--mask", "causal"],
    ["step", "--mistake", "no-scale", "--mask", "causal", "--dtype", "float64"],
    ["paged"],
    ["paged", "--requests", "6+4,9+2", "--shared-prefix", "6", "--samples", "3", "--d-model", "16", "--heads", "4",
     "--kv-heads", "2"],
    ["paged", "--requests", "6+6,6+6,6+6", "--block-size", "2", "--blocks", "6", "--kv-heads", "1", "--dtype",
     "float64"],
    # one transformer block (#33): pre/post, both norms, both MLPs, both archs, float32 at d = 64
    ["block"],
    ["block", "--norm", "post", "--norm-type", "rmsnorm", "--mlp", "swiglu", "--arch", "encoder"],
    ["block", "--mlp", "swiglu", "--heads", "4", "--dtype", "float64"],
    ["block", "--norm", "post", "--seq-len", "7", "--d-model", "12", "--heads", "3", "--dtype", "float64"],
    ["block", "--seq-len", "16", "--d-model", "64", "--heads", "4", "--mlp", "swiglu", "--norm-type", "rmsnorm"],
]


# kv-cache --mask window:W (#24 point 1): every W from 1 to T = p + t, at sizes where the prompt is
# longer and shorter than W, with GQA/MQA, RoPE and float64; each transcript must exit 0, evict as the
# tool does (its final cache is checked slot by slot) and reproduce every number.
WINDOW_SIZES = [
    [],
    ["--prompt-len", "6", "--steps", "3", "--heads", "4", "--kv-heads", "2", "--rope", "--dtype", "float64"],
    ["--prompt-len", "1", "--steps", "5", "--d-model", "4", "--heads", "2", "--kv-heads", "1"],
    ["--prompt-len", "7", "--steps", "2", "--d-model", "6", "--heads", "3", "--kv-heads", "1", "--dtype", "float64"],
]


def window_runs():
    runs = []
    for sizes in WINDOW_SIZES:
        p = int(sizes[sizes.index("--prompt-len") + 1]) if "--prompt-len" in sizes else 4
        t = int(sizes[sizes.index("--steps") + 1]) if "--steps" in sizes else 4
        runs += [["kv-cache", "--mask", f"window:{w}"] + sizes for w in range(1, p + t + 1)]
    return runs


def mistake_ids():
    out = subprocess.run([EXE, "mistakes"], capture_output=True, text=True, check=True).stdout
    return re.findall(r"^  ([a-z0-9]+(?:-[a-z0-9]+)+) ", out, re.M)


def generate(args):
    r = subprocess.run([EXE] + args + ["--format", "python"], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"FAIL {' '.join(args)}: attn-explain exited {r.returncode}: {r.stderr.strip()}")
    return r.stdout


def run(script):
    """Runs a generated script in this interpreter (one torch import for the whole matrix, not one
    per script), as `python3 script.py` would: its stdout, stderr and exit status."""
    out, err = io.StringIO(), io.StringIO()
    code = 0
    grad = torch.is_grad_enabled()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            exec(compile(script, "<attn-explain --format python>", "exec"), {"__name__": "__main__"})
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except Exception:  # a traceback, as python3 would print it
            traceback.print_exc()
            code = 1
    torch.set_grad_enabled(grad)
    return subprocess.CompletedProcess(["<script>"], code, out.getvalue(), err.getvalue())


# flash --dtype float32 with large scores (standard deviation about 30): the tiled float32 result
# must be as close to float64 as PyTorch's own float32 attention on the same float32 Q, K, V. (Its
# scores accumulate wide and round once, so it is usually closer: one rounding of a score near 70
# moves it by up to 4e-6, and exp() passes that on to the weights.)
FLASH32_RUNS = [(16, 25, 27, 13, 23, 2), (33, 21, 28, 22, 16, 3), (40, 32, 32, 32, 8, 1), (24, 8, 4, 8, 5, 7)]


def flash_float32_accuracy(n, d_model, d_k, d_v, bq, bk, seed):
    import numpy as np
    rng = np.random.default_rng(seed)
    with tempfile.TemporaryDirectory() as d:
        w = (30.0 / d_model) ** 0.5  # scores of standard deviation about 30
        for name, shape, sigma in (("X", (n, d_model), 1.0), ("W_Q", (d_model, d_k), w),
                                   ("W_K", (d_model, d_k), w), ("W_V", (d_model, d_v), 1.0)):
            np.save(f"{d}/{name}.npy", (rng.standard_normal(shape) * sigma).astype(np.float32))
        args = ["flash", "--load", d, "--save", f"{d}/out", "--dtype", "float32", "--block-q", str(bq),
                "--block-k", str(bk), "--format", "json", "--no-pause"]
        r = subprocess.run([EXE] + args, capture_output=True, text=True)
        if r.returncode != 0:
            return f"{' '.join(args)}: exit {r.returncode}: {r.stderr.strip()}", None
        q, k, v = (torch.from_numpy(np.load(f"{d}/out/{t}.npy")).double() for t in ("Q", "K", "V"))
        tiled = torch.from_numpy(np.load(f"{d}/out/output.npy")).double()
    if not all(torch.equal(t, t.float().double()) for t in (q, k, v, tiled)):
        return "the saved Q, K, V or output are not float32 values", None
    exact = torch.softmax(q @ k.T / (d_k ** 0.5), -1) @ v
    torch32 = (torch.softmax(q.float() @ k.float().T / (d_k ** 0.5), -1) @ v.float()).double()
    e_tool, e_torch = (tiled - exact).abs().max().item(), (torch32 - exact).abs().max().item()
    if not (e_torch > 0 and e_tool <= 2 * e_torch + 1e-6):
        return f"float32 error {e_tool:.3g} against float64, PyTorch float32's is {e_torch:.3g}", None
    return None, f"error {e_tool:.3g} against float64 (PyTorch float32: {e_torch:.3g})"


JSON_RUNS = [
    ["step", "--mask", "causal"],
    ["step", "--kv-len", "5", "--mask", "causal", "--align", "bottom-right", "--dtype", "float64"],
    ["step", "--rope", "--d-k", "6", "--d-v", "3"],
    ["step", "--qk-norm", "--softcap", "1", "--mask", "causal"],
    ["heads", "--batch", "2", "--lengths", "4,2", "--mask", "causal", "--bias"],
    ["heads", "--kv-len", "6", "--mask", "causal", "--bias", "--dtype", "float64"],
    ["grad", "--mask", "causal"],
    ["grad", "--qk-norm", "--softcap", "1", "--mask", "causal", "--dtype", "float64"],
    ["mistake", "no-scale"],
]
INPUTS = {"X", "memory", "W_Q", "W_K", "W_V", "W_O", "target", "G"}


def as_tensor(data, dtype):
    def fix(x):
        if isinstance(x, list):
            return [fix(v) for v in x]
        return float(x) if isinstance(x, str) else x  # "inf", "-inf", "nan"
    return torch.tensor(fix(data), dtype=dtype)


def json_contract(args):
    """The JSON contract itself: each step's `pytorch` string, run with only torch, math, F, the
    inputs under their ids and the dimension names, leaves the step's data in its variable."""
    import json
    import math
    r = subprocess.run([EXE] + args + ["--format", "json"], capture_output=True, text=True, check=True)
    doc = json.loads(r.stdout)
    cfg = doc["config"]
    steps = doc["correct"]["steps"] if "correct" in doc else doc["steps"]
    dtype = torch.float64 if cfg["dtype"] == "float64" else torch.float32
    n = cfg["seq_len"]
    ids = [s["id"] for s in steps]
    m = next(s["shape"][-2] for s in steps if s["id"] == "K")
    ns = {"torch": torch, "math": math, "F": torch.nn.functional, "n": n, "m": m, "d_model": cfg["d_model"],
          "d_k": cfg["d_k"], "d_v": cfg["d_v"], "B": cfg.get("batch", 1), "h": cfg.get("heads", 1)}
    ns["d_head"] = cfg["d_model"] // ns["h"]
    for name, values in doc.get("biases", {}).items():
        ns[name] = as_tensor(values, dtype)
    grad = args[0] == "grad"
    return run_steps(steps, ns, dtype, INPUTS, grad)


def run_steps(steps, ns, dtype, inputs, grad=False):
    """Runs each step's `pytorch` string in ns, in order (the steps in `inputs` take the step's
    data instead); None when every one leaves the step's data in its variable, else the problem."""
    # float32: Higham's γ_K = K·u/(1 − K·u) with K the sum of the lengths summed over along the
    # chain (X·W over d_model, Q·Kᵀ over d_k, P·V over m, and the softmax's row over m), times 8
    # for the steps that add and scale on top (never below the 1e-5 of the generated scripts).
    k = sum(int(ns.get(name, 0)) for name in ("d_model", "d_k", "m", "m", "d_v"))
    u = 2.0**-24
    tol = 1e-10 if dtype == torch.float64 else max(1e-5, 8 * k * u / (1 - k * u))
    torch.set_grad_enabled(grad)
    for s in steps:
        want = as_tensor(s["data"], dtype)
        var = {"scaled_scores": "scaled", "masked_scores": "masked", "capped_scores": "capped"}.get(s["id"], s["id"])
        if s["id"] in inputs:
            ns[var] = want.clone().requires_grad_(grad and s["id"] not in ("target", "G"))
            continue
        exec(s["pytorch"], ns)
        got = ns[var].detach().to(torch.float64)
        want = want.to(torch.float64)
        same = (got - want).abs() <= tol * want.abs().clamp(min=1)
        same |= (torch.isnan(got) & torch.isnan(want)) | (torch.isinf(want) & (got == want))
        if tuple(got.shape) != tuple(want.shape) or not bool(same.all()):
            return f"step {s['id']}: {s['pytorch']!r} does not give the step's data"
    torch.set_grad_enabled(False)
    return None


# `positions --encoding E --format json` (the steps of one encoding): X and W_Q, W_K, W_V come from
# --load (the JSON has X but not the weights), the learned table is the `pe` step's data.
# (encoding, extra flags, n, d_model, d_k); each runs with --mask none and --mask causal, float32 and float64.
POSITIONS_RUNS = [
    ("none", [], 6, 8, 8),
    ("sinusoidal", [], 6, 8, 8),
    ("sinusoidal", [], 5, 7, 4),
    ("learned", [], 6, 8, 8),
    ("rope", [], 6, 8, 8),
    ("rope", ["--rope-style", "interleaved", "--rope-base", "500000"], 7, 6, 6),
    ("alibi", [], 6, 8, 8),
    ("alibi", ["--heads", "6"], 5, 8, 4),
    ("alibi", ["--heads", "12"], 6, 8, 8),
]


def positions_contract(encoding, extra, n, d_model, d_k, mask, dtype):
    """The JSON contract for one `positions --encoding E` run on inputs of our own."""
    import json
    import math
    import os
    import numpy as np
    np_type = np.float64 if dtype == torch.float64 else np.float32
    g = np.random.default_rng(n * 100 + d_model * 10 + d_k)
    with tempfile.TemporaryDirectory() as folder:
        for name, shape in (("X", (n, d_model)), ("W_Q", (d_model, d_k)), ("W_K", (d_model, d_k)), ("W_V", (d_model, d_k))):
            np.save(os.path.join(folder, name + ".npy"), g.standard_normal(shape).astype(np_type))
        args = ["positions", "--encoding", encoding, "--mask", mask, "--dtype", str(dtype).split(".")[1],
                "--load", folder] + extra + ["--format", "json"]
        r = subprocess.run([EXE] + args, capture_output=True, text=True)
        if r.returncode != 0:
            return args, f"exit {r.returncode}: {r.stderr.strip()}"
        doc = json.loads(r.stdout)
        ns = {"torch": torch, "math": math, "F": torch.nn.functional, "n": n, "d_model": d_model, "d_k": d_k,
              "h": doc["measures"].get("heads", 1)}
        for name in ("W_Q", "W_K", "W_V"):
            ns[name] = torch.from_numpy(np.load(os.path.join(folder, name + ".npy")))
        x = torch.from_numpy(np.load(os.path.join(folder, "X.npy")))
    if doc["encoding"] != encoding or doc["config"]["mask"] != mask or doc["config"]["dtype"] != str(dtype).split(".")[1]:
        return args, f"the JSON says encoding {doc['encoding']}, mask {doc['config']['mask']}, dtype {doc['config']['dtype']}"
    if not torch.equal(as_tensor(doc["steps"][0]["data"], dtype), x):
        return args, "the X step is not the loaded X.npy"
    inputs = {"X"} | ({"pe"} if encoding == "learned" else set())
    return args, run_steps(doc["steps"], ns, dtype, inputs)


# float32 at sizes where rounding differs between BLAS libraries (a score off by 3e-4 at d = 64 is
# normal with OpenBLAS and failed a fixed 1e-5): `--blas` runs these under every BLAS installed.
BLAS_RUNS = [
    ["step", "--seq-len", "16", "--d-model", "64", "--d-k", "64", "--mask", "causal"],
    ["step", "--seq-len", "24", "--d-model", "128", "--d-k", "128", "--d-v", "32", "--init", "randn"],
    ["heads", "--seq-len", "12", "--d-model", "64", "--heads", "4", "--init", "randn"],
    ["heads", "--seq-len", "16", "--d-model", "128", "--heads", "2", "--init", "randn", "--mask", "causal"],
    ["kv-cache", "--d-model", "64", "--heads", "4", "--kv-heads", "2"],
    ["grad", "--seq-len", "12", "--d-model", "64", "--d-k", "64", "--mask", "causal"],
    ["paged", "--requests", "9+5,12+3", "--shared-prefix", "8", "--samples", "2", "--d-model", "64", "--heads", "4",
     "--kv-heads", "2"],
    ["mistake", "no-scale", "--seq-len", "16", "--d-model", "64", "--d-k", "64"],
    ["step", "--seq-len", "8", "--d-model", "1024", "--d-k", "512", "--d-v", "8", "--mask", "causal"],
]
BLAS_DIRS = ["/usr/lib/x86_64-linux-gnu/blas", "/usr/lib/x86_64-linux-gnu/openblas-pthread",
             "/usr/lib/x86_64-linux-gnu/openblas-openmp", "/usr/lib/x86_64-linux-gnu/openblas-serial",
             "/usr/lib/x86_64-linux-gnu/blis-openmp", "/usr/lib/x86_64-linux-gnu/blis-pthread",
             "/usr/lib/x86_64-linux-gnu/atlas"]


def blas_in_use():
    with open("/proc/self/maps") as f:
        libs = {line.split()[-1] for line in f if "blas" in line and line.split()[-1].startswith("/")}
    return ", ".join(sorted(libs)) or "none"


def one_blas():
    """The float32 BLAS_RUNS under the BLAS this interpreter loaded (LD_LIBRARY_PATH picks it)."""
    failed = 0
    for args in BLAS_RUNS:
        r = run(generate(args))
        last = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ""
        if r.returncode != 0 or not re.fullmatch(r"all \d+ steps match", last):
            failed += 1
            print(f"FAIL {' '.join(args)} under {blas_in_use()}: exit {r.returncode}, {last!r}\n{r.stderr[-1500:]}")
    print(f"{len(BLAS_RUNS)} float32 scripts under {blas_in_use()}: {failed} failure(s)")
    sys.exit(1 if failed else 0)


def every_blas():
    import os
    dirs = [d for d in BLAS_DIRS if os.path.exists(os.path.join(d, "libblas.so.3"))]
    failed = 0
    for d in dirs:
        env = dict(os.environ, LD_LIBRARY_PATH=d, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
        r = subprocess.run([sys.executable, __file__, EXE, "--one-blas"], capture_output=True, text=True, env=env)
        print(r.stdout.strip())
        if r.returncode != 0 or d not in r.stdout:
            failed += 1
            print(f"FAIL under {d}: exit {r.returncode}\n{r.stderr[-1500:]}")
    print(f"{len(dirs)} BLAS libraries: {', '.join(dirs)}; {failed} failure(s)")
    sys.exit(1 if failed else 0)


def main():
    if sys.argv[2:] == ["--one-blas"]:
        one_blas()
    if sys.argv[2:] == ["--blas"]:
        every_blas()
    ids = mistake_ids()
    if len(ids) < 20:
        raise SystemExit(f"FAIL: only {len(ids)} mistake ids parsed from `attn-explain mistakes`")
    runs = RUNS + [["mistake", i] for i in ids] + window_runs()
    failed = 0
    for args in runs:
        script = generate(args)
        r = run(script)
        last = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ""
        m = re.fullmatch(r"all (\d+) steps match", last)
        oks = len(re.findall(r"^ok ", r.stdout, re.M))
        if r.returncode != 0 or not m or int(m.group(1)) != oks or oks < 3:
            failed += 1
            print(f"FAIL {' '.join(args)}: exit {r.returncode}, last line {last!r}\n{r.stderr[-2000:]}")
        else:
            print(f"ok {' '.join(args)}: {last}")
    for args in JSON_RUNS:
        problem = json_contract(args)
        if problem:
            failed += 1
            print(f"FAIL JSON {' '.join(args)}: {problem}")
        else:
            print(f"ok JSON {' '.join(args)}: every pytorch line reproduces its step")
    checked = len(JSON_RUNS)
    for encoding, extra, n, d_model, d_k in POSITIONS_RUNS:
        for mask in ("none", "causal"):
            for dtype in (torch.float32, torch.float64):
                args, problem = positions_contract(encoding, extra, n, d_model, d_k, mask, dtype)
                checked += 1
                if problem:
                    failed += 1
                    print(f"FAIL JSON {' '.join(args)}: {problem}")
                else:
                    print(f"ok JSON positions --encoding {encoding} {' '.join(extra)} --mask {mask} "
                          f"({n}, {d_model}, {d_k}) {dtype}: every pytorch line reproduces its step")
    for i, (n, d_model, d_k, d_v, bq, bk) in enumerate(FLASH32_RUNS):
        problem, detail = flash_float32_accuracy(n, d_model, d_k, d_v, bq, bk, seed=i)
        checked += 1
        if problem:
            failed += 1
            print(f"FAIL flash float32 accuracy: {problem}")
        else:
            print(f"ok flash --dtype float32 n={n} block {bq}x{bk}, scores of std 30: {detail}")
    # The check can fail: change one embedded value of the output and the script must stop there.
    script = generate(["step", "--mask", "causal"])
    lines = script.splitlines()
    idx = max(i for i, l in enumerate(lines) if l.startswith('check("output"'))
    lines[idx] = re.sub(r"tensor\(\[\[(-?[0-9.e-]+)", lambda mm: "tensor([[" + repr(float(mm.group(1)) + 0.01), lines[idx], 1)
    r = run("\n".join(lines) + "\n")
    if r.returncode != 1 or "MISMATCH output" not in r.stdout:
        failed += 1
        print(f"FAIL: a changed output value was not caught (exit {r.returncode}): {r.stdout[-500:]}")
    else:
        print("ok a changed value is caught:", r.stdout.strip().splitlines()[-1])
    print(f"{len(runs)} scripts and {checked} JSON documents checked, {failed} failure(s); torch {torch.__version__}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
