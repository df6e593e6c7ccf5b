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
out = []
for e in entries:
    cmd = e["command"]
    cmd = re.sub(r"\s-include\s+\S*cmake_pch\.hxx", "", cmd)
    cmd = re.sub(r"\s-Winvalid-pch|\s-Werror\b", "", cmd)
    # A unity build (ATTN_UNITY) compiles Unity/unity_N_cxx.cxx, which #includes the real files:
    # clang-tidy gets one entry per real file, with the same flags.
    if re.search(r"/Unity/unity_\d+_cxx\.cxx$", e["file"]):
        for inc in re.findall(r'^#include "([^"]+)"', open(e["file"]).read(), re.M):
            out.append(dict(e, file=inc, command=cmd.replace(e["file"], inc)))
        continue
    e["command"] = cmd
    out.append(e)
json.dump(out, open(sys.argv[2], "w"), indent=1)
PY
files=()
headers=""
for folder in "$@"; do
  files+=("^$src/$folder/.*\\.cpp\$")
  headers="$headers${headers:+|}$src/$folder/"
done
# No file at all would be a silent pass (it was, once: a unity build hid every file).
python3 - "$build/tidy/compile_commands.json" "$@" <<PY || { echo "tidy: no file of $* in $build/compile_commands.json" >&2; exit 2; }
import json, sys
files = [e["file"] for e in json.load(open(sys.argv[1]))]
sys.exit(0 if all(any("/" + f.strip("/") + "/" in x for x in files) for f in sys.argv[2:]) else 1)
PY
status=0
"$runner" -p "$build/tidy" -j 2 -quiet -header-filter="^($headers)" "${files[@]}" >"$build/tidy/log" 2>&1 || status=$?
# What clang-tidy found, without its progress lines.
grep -v -E '^(Running clang-tidy|[0-9]+ warnings? (and [0-9]+ errors? )?generated|Suppressed [0-9]+ warnings|Use -header-filter|Enabled checks:|clang-tidy-[0-9]+ |$)' \
  "$build/tidy/log" || true
exit "$status"
