#!/usr/bin/env bash
# `attn-explain learn` at its defaults: for every task and seeds 1..5, the wall time of one run
# and what it reached (held-out accuracy, pattern score). The acceptance bar: accuracy >= 99%
# (induction >= 95%), pattern score >= 0.9 (induction head >= 0.6), under 5 s each.
# Usage: tests/bench/learn_speed.sh [path/to/attn-explain] [tasks...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exe=${1:-$here/../../build/attn-explain}
shift || true
tasks=${*:-previous reverse max induction}
[ -x "$exe" ] || { echo "learn_speed: build first (no $exe)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "learn_speed: python3 reads the JSON" >&2; exit 2; }

fail=0
printf '%-10s %4s %8s %9s %7s %s\n' task seed time_s accuracy pattern verdict
for task in $tasks; do
  for seed in 1 2 3 4 5; do
    t0=$(date +%s%N)
    json=$("$exe" learn --task "$task" --seed "$seed" --format json)
    t1=$(date +%s%N)
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
    line=$(printf '%s' "$json" | python3 -c '
import json, sys
r = json.load(sys.stdin)
f = r["final"]
print("%.2f %.3f %.3f" % (100 * f["accuracy"], f["pattern_score"], f.get("previous_token_score", 1)))')
    read -r acc score prev <<<"$line"
    verdict=$(awk -v t="$task" -v s="$secs" -v a="$acc" -v p="$score" -v q="$prev" 'BEGIN {
      acc_bar = (t == "induction") ? 95 : 99; pat_bar = (t == "induction") ? 0.6 : 0.9;
      ok = (a >= acc_bar && p >= pat_bar && s < 5);
      print ok ? "ok" : "MISSED" }')
    [ "$verdict" = ok ] || fail=1
    extra=""
    [ "$task" = induction ] && extra=" (previous-token head $prev)"
    printf '%-10s %4s %8s %8s%% %7s %s%s\n' "$task" "$seed" "$secs" "$acc" "$score" "$verdict" "$extra"
  done
done
exit $fail
