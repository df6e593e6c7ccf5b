#!/usr/bin/env bash
# Speed of the default walkthrough: `attn-explain step --no-pause` against the tutorial's
# PyTorch script, measured side by side in one run (ratios, not absolute times, are the point
# on a shared machine). Usage: tests/bench/step_speed.sh [path/to/attn-explain] [runs]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exe=${1:-$here/../../build/attn-explain}
runs=${2:-30}
[ -x "$exe" ] || { echo "step_speed: build first (no $exe)" >&2; exit 2; }

# Mean wall time of a command in milliseconds over $runs runs (after one warm-up).
mean_ms() {
  "$@" >/dev/null 2>&1
  local t0 t1
  t0=$(date +%s%N)
  for _ in $(seq "$runs"); do "$@" >/dev/null 2>&1; done
  t1=$(date +%s%N)
  awk -v a="$t0" -v b="$t1" -v n="$runs" 'BEGIN { printf "%.2f", (b - a) / 1e6 / n }' 
}

ours=$(mean_ms "$exe" step --no-pause)
ours_json=$(mean_ms "$exe" step --format json)
echo "attn-explain step --no-pause      ${ours} ms  (goal: < 20 ms)"
echo "attn-explain step --format json   ${ours_json} ms"
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  py_runs=$(( runs < 5 ? runs : 5 ))
  runs=$py_runs
  theirs=$(mean_ms /usr/bin/python3 "$here/tutorial_step.py")
  echo "tutorial PyTorch script           ${theirs} ms  (mean of $py_runs runs)"
  echo "speed-up: $(awk -v a="$theirs" -v b="$ours" 'BEGIN { printf "%.0f", a / b }')x"
else
  echo "tutorial PyTorch script           skipped: /usr/bin/python3 has no torch (apt-get install python3-torch)"
fi
awk -v t="$ours" 'BEGIN { exit !(t < 20) }' && echo "OK: under 20 ms" || { echo "NOT OK: over 20 ms"; exit 1; }
