#!/usr/bin/env bash
# The HTML export in a real browser: renders `step`, `heads` and `mistake no-scale` to HTML, opens
# each in headless Chromium, takes a screenshot and checks it is not blank (tests/html/png_ink.py).
# Usage: screenshot_test.sh ATTN_EXPLAIN_BINARY. Exit 77 (skipped) when Chromium or python3 is
# missing; .ci/run installs both, so CI always runs it.
set -euo pipefail
bin=$1
here=$(cd "$(dirname "$0")" && pwd)
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] && [ -x /usr/bin/python3 ] || { echo "chromium or /usr/bin/python3 not installed: skipped"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
for run in "step --mask causal --tokens 'the cat sat'" "heads --mask causal" "mistake no-scale"; do
  name=$(echo "$run" | cut -d' ' -f1-2 | tr ' ' '-')
  eval "\"$bin\" $run --format html" > "$work/$name.html"
  # --no-sandbox: CI runs as root; the profile lives in the temp folder.
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$work/profile" \
    --window-size=1200,1600 --screenshot="$work/$name.png" "file://$work/$name.html" >"$work/$name.log" 2>&1 || {
    echo "chromium failed on $run:"; tail -5 "$work/$name.log"; status=1; continue; }
  if verdict=$(/usr/bin/python3 "$here/png_ink.py" "$work/$name.png"); then
    echo "ok   $run: $verdict"
  else
    echo "FAIL $run: blank screenshot ($verdict)"; status=1
  fi
done
exit $status
