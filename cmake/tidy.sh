#!/usr/bin/env bash
# clang-tidy (the preset in .clang-tidy) over the files of a build's compile_commands.json, two at
# a time. Usage: cmake/tidy.sh BUILD_DIR SOURCE_DIR FOLDER... (folders of SOURCE_DIR: lib/attn/core
# lib/attn/io for `--target tidy`, the CI's part; lib app tests for `--target tidy-all`).
# Exit 1 when clang-tidy reports anything (.clang-tidy makes every warning an error).
#
# The build precompiles headers with g++ (ATTN_PCH), which clang cannot read: the commands are
# copied to BUILD_DIR/tidy/ without the PCH and without -Werror (the compiler's warnings are g++'s
# job; clang-tidy's are its checks).
set -euo pipefail
build=$1 src=$2
shift 2
runner=$(command -v run-clang-tidy-14 || command -v run-clang-tidy || true)
if [ -z "$runner" ]; then
  echo "tidy: run-clang-tidy not found (apt-get install clang-tidy)" >&2
  exit 2
fi
mkdir -p "$build/tidy"
python3 - "$build/compile_commands.json" "$build/tidy/compile_commands.json" <<'PY'
import json, re, sys
entries = json.load(open(sys.argv[1]))
for e in entries:
    cmd = e["command"]
    cmd = re.sub(r"\s-include\s+\S*cmake_pch\.hxx", "", cmd)
    cmd = re.sub(r"\s-Winvalid-pch|\s-Werror\b", "", cmd)
    e["command"] = cmd
json.dump(entries, open(sys.argv[2], "w"), indent=1)
PY
files=()
headers=""
for folder in "$@"; do
  files+=("^$src/$folder/.*\\.cpp\$")
  headers="$headers${headers:+|}$src/$folder/"
done
status=0
"$runner" -p "$build/tidy" -j 2 -quiet -header-filter="^($headers)" "${files[@]}" >"$build/tidy/log" 2>&1 || status=$?
# What clang-tidy found, without its progress lines.
grep -v -E '^(Running clang-tidy|[0-9]+ warnings? (and [0-9]+ errors? )?generated|Suppressed [0-9]+ warnings|Use -header-filter|Enabled checks:|clang-tidy-[0-9]+ |$)' \
  "$build/tidy/log" || true
exit "$status"
