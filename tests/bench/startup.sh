#!/usr/bin/env bash
# Start-up time (issue 36, goal 3): `attn-explain --version` and `attn-explain step --no-pause` at
# the defaults against a minimal C++ program (`int main(){puts("x");}`, plain `g++ -O2`), timed by
# hyperfine side by side in one run: the ratios are the point on a shared, noisy machine (goal: each
# within 2x of the minimal program, and under 5 ms on an idle machine). Not a timed test: run it by
# hand after building. It prints the load, the shared libraries loaded at start and the ratios.
# Usage: tests/bench/startup.sh [path/to/attn-explain] [extra hyperfine flags, e.g. --runs 500]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exe=${1:-$here/../../build/attn-explain}
shift || true
[ -x "$exe" ] || { echo "startup: build first (no $exe)" >&2; exit 2; }
command -v hyperfine >/dev/null 2>&1 || { echo "startup: needs hyperfine (apt-get install hyperfine)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '#include <cstdio>\nint main() { puts("x"); }\n' >"$work/min.cpp"
g++ -O2 "$work/min.cpp" -o "$work/min"
exe=$(cd "$(dirname "$exe")" && pwd)/$(basename "$exe")

echo "load: $(uptime | sed 's/.*load average/load average/')"
if ldd "$exe" 2>&1 | grep -q "statically linked"; then
  echo "shared libraries of attn-explain: none at start-up (a static PIE)"
else
  echo "shared libraries of attn-explain: $(ldd "$exe" | awk '$1 !~ /vdso/ {print $1}' | xargs)"
fi
cd "$work"  # `step` writes nothing, but start it from an empty folder anyway
hyperfine -N --warmup 20 --export-json "$work/times.json" "$@" ./min "$exe --version" "$exe step --no-pause" >&2
/usr/bin/python3 - "$work/times.json" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))["results"]
base = runs[0]
print(f"{'command':44} {'mean ms':>8} {'min ms':>7} {'ratio':>6}")
worst = 0.0
for r in runs:
    name = "minimal C++ (g++ -O2, puts)" if r is base else "attn-explain" + r["command"].split("attn-explain", 1)[1]
    ratio = r["mean"] / base["mean"]
    worst = max(worst, ratio)
    print(f"{name:44} {r['mean'] * 1e3:8.2f} {r['min'] * 1e3:7.2f} {ratio:6.2f}")
print(("OK" if worst <= 2 else "NOT OK") + f": the slowest is {worst:.2f}x the minimal program (goal: <= 2x)")
PY
