#!/usr/bin/env bash
# Peak memory of a big walkthrough, counted in n × n double matrices (8·n² bytes each), so the
# figure does not depend on the machine: `step --seq-len N` in text, Markdown and JSON. The trace
# keeps five n × n steps (scores, scaled, masked, weights and the shifted scores); pages view
# them rather than copy them, and the JSON is written once into one string, which is then the
# output itself. Goal: peak RSS minus the output's size under 6.5 matrices at n = 4000 (it was
# 10 for text, 24 for JSON, before the copies were removed).
# Usage: tests/bench/page_memory.sh [path/to/attn-explain] [n]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exe=${1:-$here/../../build/attn-explain}
n=${2:-4000}
[ -x "$exe" ] || { echo "page_memory: build first (no $exe)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "page_memory: python3 measures the child's peak RSS" >&2; exit 2; }

EXE="$exe" N="$n" python3 - <<'PY'
import os, resource, subprocess, sys, tempfile, time
exe, n = os.environ["EXE"], int(os.environ["N"])
matrix = 8 * n * n
worst = 0.0
print(f"attn-explain ... --seq-len {n}: one n x n double matrix = {matrix / 2**20:.0f} MiB")
print(f"{'command':<44}{'seconds':>8}{'peak MiB':>10}{'out MiB':>9}{'matrices':>10}")
# --max-output none: the budget refuses these sizes up front (text keeps every value too)
for args in (["step"], ["step", "--format", "markdown"], ["step", "--format", "json"]):
    cmd = [exe] + args + ["--seq-len", str(n), "--no-pause", "--max-output", "none"]
    # a fresh interpreter per run: RUSAGE_CHILDREN's peak is the largest child so far
    probe = ("import resource, subprocess, sys, time; t = time.time(); "
             "r = subprocess.run(sys.argv[2:], stdout=open(sys.argv[1], 'wb'), stderr=subprocess.PIPE); "
             "print(r.returncode, time.time() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    with tempfile.TemporaryDirectory() as d:
        sink = os.path.join(d, "out")
        out = subprocess.run([sys.executable, "-c", probe, sink] + cmd, capture_output=True, text=True).stdout.split()
        size = os.path.getsize(sink)
    code, secs, kib = int(out[0]), float(out[1]), int(out[2])
    if code != 0:
        sys.exit(f"page_memory: {' '.join(cmd)} exited {code}")
    ratio = (kib * 1024 - size) / matrix
    worst = max(worst, ratio)
    print(f"{' '.join(args):<44}{secs:>8.2f}{kib / 1024:>10.0f}{size / 2**20:>9.0f}{ratio:>10.2f}")
ok = worst < 6.5
print(("OK: " if ok else "NOT OK: ") + f"at most {worst:.2f} n x n matrices besides the output (goal < 6.5)")
sys.exit(0 if ok else 1)
PY
