#!/usr/bin/python3
"""attn-explain bench beside NumPy and PyTorch on the same sizes, in one run.

For each size (n, d) it runs `attn-explain bench` (its full and tiled kernels and its measured
FMA peak), a NumPy textbook attention (the n x n scores materialised, softmax, then P.V) and a
hand-written PyTorch one (the same three steps; PyTorch's scaled_dot_product_attention too where
the installed PyTorch has it: Debian's 1.13 does not), all float32 on --threads threads, and
prints each time as a ratio of the FMA bound 4*n*n*d / peak (the peak bench measured in the same
run), with the BLAS each one uses. Each time is the best of --runs; max|diff| is against bench's
reference kernel for attn-explain's rows and against NumPy in float64 for the others. A benchmark to rerun, not a
timed test: the machine is shared, so compare the ratios of one run.

    /usr/bin/python3 tests/bench/compare.py --bin build/attn-explain
"""
import argparse
import datetime
import json
import os
import platform
import re
import subprocess
import sys
import time


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default="build/attn-explain", help="the attn-explain binary")
    ap.add_argument("--sizes", default="4096", help="sequence lengths n, comma-separated")
    ap.add_argument("--d", default="64,128", help="head dimensions d, comma-separated")
    ap.add_argument("--runs", type=int, default=5, help="runs per implementation; the best is kept")
    ap.add_argument("--threads", type=int, default=2, help="threads for NumPy's BLAS and PyTorch")
    return ap.parse_args()


ARGS = parse_args()
# The BLAS reads its thread count when it is loaded: set before NumPy is imported.
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = str(ARGS.threads)

import numpy as np  # noqa: E402

try:
    import torch  # noqa: E402
except ImportError:  # the table says so
    torch = None


def numpy_textbook(q, k, v):
    scores = q @ k.T / np.sqrt(np.float32(q.shape[1]))  # n x n, materialised
    scores -= scores.max(axis=1, keepdims=True)  # max subtraction, for stability
    p = np.exp(scores)
    p /= p.sum(axis=1, keepdims=True)
    return p @ v


def torch_textbook(q, k, v):
    scores = (q @ k.T) / float(q.shape[1]) ** 0.5
    return torch.softmax(scores, dim=-1) @ v


def best_ms(fn, runs):
    fn()  # warm-up
    best = float("inf")
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best * 1e3


def loaded_blas():
    """The BLAS-like shared libraries mapped into this process (what NumPy and PyTorch call)."""
    libs = set()
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            if re.search(r"blas|mkl|dnnl|lapack", os.path.basename(path)):
                real = os.path.realpath(path)
                libs.add(os.path.join(os.path.basename(os.path.dirname(real)), os.path.basename(real)))
    return sorted(libs)


def blas_library():
    """The BLAS library behind libblas.so.3 (Debian's alternatives pick it), or the one mapped."""
    libs = [lib for lib in loaded_blas() if "lapack" not in lib]
    named = [lib for lib in libs if re.search("openblas|mkl", os.path.basename(lib))]
    return ", ".join(named or libs) or "no BLAS library loaded"


def numpy_blas():
    return "NumPy %s: %s, %d threads" % (np.__version__, blas_library(), ARGS.threads)


def torch_blas():
    if torch is None:
        return "PyTorch: not installed"
    info = re.search(r"BLAS_INFO=([^,]*)", torch.__config__.show())
    info = info.group(1) if info else "?"
    where = " (libblas.so.3: %s)" % blas_library() if info == "generic" else ""
    mkldnn = "oneDNN" if torch.backends.mkldnn.is_available() else "no oneDNN"
    return "PyTorch %s: BLAS_INFO=%s%s, %s, %d threads" % (torch.__version__, info, where, mkldnn,
                                                           torch.get_num_threads())


ISA = set()  # the instruction sets bench's kernels reported


def run_bench(n, d):
    cmd = [ARGS.bin, "bench", "--sizes", str(n), "--d", str(d), "--repeat", str(ARGS.runs), "--format", "json"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    doc = json.loads(out)
    rows = {r["impl"]: r for r in doc["results"]}
    ISA.add(doc.get("isa", "?"))
    return doc["peak_gflops"], rows


def measure(n, d):
    """[(name, ms, max |diff| vs NumPy float64)], the peak, for one size."""
    peak, rows = run_bench(n, d)
    rng = np.random.default_rng(n * 7 + d)
    q, k, v = (rng.standard_normal((n, d), dtype=np.float32) for _ in range(3))
    exact = numpy_textbook(q.astype(np.float64), k.astype(np.float64), v.astype(np.float64))
    results = [("attn-explain full", rows["full"]["ms"], rows["full"]["max_diff"]),
               ("attn-explain tiled", rows["tiled"]["ms"], rows["tiled"]["max_diff"])]
    results.append(("NumPy textbook", best_ms(lambda: numpy_textbook(q, k, v), ARGS.runs),
                    float(np.abs(numpy_textbook(q, k, v) - exact).max())))
    if torch is not None:
        tq, tk, tv = (torch.from_numpy(x) for x in (q, k, v))
        with torch.no_grad():
            got = torch_textbook(tq, tk, tv).numpy()
            results.append(("PyTorch textbook", best_ms(lambda: torch_textbook(tq, tk, tv), ARGS.runs),
                            float(np.abs(got - exact).max())))
            sdpa = getattr(torch.nn.functional, "scaled_dot_product_attention", None)
            if sdpa is not None:
                f = lambda: sdpa(tq[None], tk[None], tv[None])[0]  # noqa: E731
                results.append(("PyTorch sdpa", best_ms(f, ARGS.runs), float(np.abs(f().numpy() - exact).max())))
    return results, peak


def machine():
    model = "?"
    with open("/proc/cpuinfo") as info:
        for line in info:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    load = os.getloadavg()
    return "%s, nproc %d, %s; load average %.2f %.2f %.2f" % (platform.system(), os.cpu_count(), model, *load)


def main():
    if torch is not None:
        torch.set_num_threads(ARGS.threads)
    print("compare.py, %s UTC" % datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"))
    print("machine: %s" % machine())
    print(numpy_blas())
    print(torch_blas())
    # Narrow enough (51 columns) to be kept as it is on the help page at 60 columns.
    print("%4s %3s %-19s %7s %6s %7s" % ("n", "d", "implementation", "ms", "xbound", "maxdiff"))
    for n in (int(x) for x in ARGS.sizes.split(",")):
        for d in (int(x) for x in ARGS.d.split(",")):
            results, peak = measure(n, d)
            bound_ms = 4.0 * n * n * d / (peak * 1e9) * 1e3
            print("%4d %3d %-19s %7.1f %6.2f" % (n, d, "FMA bound %.0f GF/s" % peak, bound_ms, 1.0))
            for name, ms, diff in results:
                print("%4d %3d %-19s %7.1f %6.2f %7.1e" % (n, d, name, ms, ms / bound_ms, diff))
    print("attn-explain: its own micro-kernel, no BLAS; instructions: %s; 2 threads" % ", ".join(sorted(ISA)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
