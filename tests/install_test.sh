#!/usr/bin/env bash
# `cmake --install` into a temporary prefix: the binary, the man page and the three shell
# completions land where the README says, the installed binary runs, and bash completes with it.
# Usage: install_test.sh BUILD_DIR
set -euo pipefail
build=$1
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
for f in bin/attn-explain share/man/man1/attn-explain.1 share/bash-completion/completions/attn-explain \
         share/zsh/site-functions/_attn-explain share/fish/vendor_completions.d/attn-explain.fish; do
  [ -s "$prefix/$f" ] || { echo "missing after install: $f"; exit 1; }
done
"$prefix/bin/attn-explain" step --no-pause >/dev/null
grep -q '^\.TH ATTN-EXPLAIN "\{0,1\}1' "$prefix/share/man/man1/attn-explain.1" || { echo "man page has no .TH header"; exit 1; }
words=$(bash -c 'source "$1"; COMP_WORDS=(attn-explain st); COMP_CWORD=1; _attn_explain; echo "${COMPREPLY[*]}"' _ \
        "$prefix/share/bash-completion/completions/attn-explain")
[ "$words" = "step" ] || { echo "bash completion of 'st' gave '$words'"; exit 1; }
words=$(bash -c 'source "$1"; COMP_WORDS=(attn-explain heads --batch-i); COMP_CWORD=2; _attn_explain; echo "${COMPREPLY[*]}"' _ \
        "$prefix/share/bash-completion/completions/attn-explain")
[ "$words" = "--batch-index" ] || { echo "bash completion of 'heads --batch-i' gave '$words'"; exit 1; }
echo "install ok: $(cd "$prefix" && find . -type f | sort | tr '\n' ' ')"
