#!/usr/bin/env bash
# Speed of the tiled attention kernel against NumPy's textbook attention at n = 4096, d = 64, float32,
# measured side by side in one run (ratios, not absolute times, are the point on a shared machine).
# Builds nothing. Goal: tiled at least 2x faster than the NumPy textbook version.
# Usage: tests/bench/kernel_speed.sh [path/to/attn-explain] [repeat]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exe=${1:-$here/../../build/attn-explain}
repeat=${2:-5}
[ -x "$exe" ] || { echo "kernel_speed: build first (no $exe)" >&2; exit 2; }
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "kernel_speed: /usr/bin/python3 has no numpy (apt-get install python3-numpy)" >&2; exit 2; }

json=$("$exe" bench --sizes 4096 --d 64 --repeat "$repeat" --format json)
# OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE, where set on this machine, slow a current numpy: unset both,
# for this one command only.
numpy_out=$(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3 "$here/numpy_attention.py" --n 4096 --d 64 --runs "$repeat")

JSON="$json" NUMPY="$numpy_out" /usr/bin/python3 - <<'PY'
import json, os, sys
bench = json.loads(os.environ["JSON"])
numpy = dict(line.split() for line in os.environ["NUMPY"].splitlines())
by_impl = {r["impl"]: r for r in bench["results"] if r["n"] == 4096}
tb, nt = float(numpy["numpy_textbook"]), float(numpy["numpy_tiled"])
print(f"n = 4096, d = 64, float32; measured FMA peak {bench['peak_gflops']:.1f} GFLOP/s")
print(f"{'version':<24}{'ms':>10}{'GFLOP/s':>10}{'extra memory':>16}{'max diff':>11}")
for name in ("reference", "full", "tiled"):
    r = by_impl[name]
    print(f"attn-explain {name:<11}{r['ms']:>10.2f}{r['gflops']:>10.1f}{r['extra_bytes'] / 2**20:>12.2f} MiB{r['max_diff']:>11.1e}")
flops = 4 * 4096 * 4096 * 64
print(f"{'numpy textbook':<24}{tb:>10.2f}{flops / tb / 1e6:>10.1f}{'64.00 MiB+':>16}")
print(f"{'numpy tiled':<24}{nt:>10.2f}{flops / nt / 1e6:>10.1f}{'':>16}{float(numpy['numpy_max_diff']):>11.1e}")
tiled = by_impl["tiled"]
ratio = tb / tiled["ms"]
print(f"speed-up, tiled vs numpy textbook: {ratio:.2f}x  (goal: >= 2x)")
ok = ratio >= 2.0 and tiled["extra_bytes"] < 4 * 2**20 and tiled["max_diff"] <= 1e-5
checks = f"extra memory {tiled['extra_bytes'] / 2**20:.2f} MiB (< 4 MiB), max diff {tiled['max_diff']:.1e} (<= 1e-5)"
print(("OK: " if ok else "NOT OK: ") + f"{ratio:.2f}x faster; {checks}")
sys.exit(0 if ok else 1)
PY
