#!/usr/bin/env bash
# `cmake --install` into a temporary prefix: the binary, the man pages (attn-explain(1) and one
# attn-explain-NAME(1) per command, English and Chinese) and the three shell completions land in
# their standard places, the installed binary runs, `man attn-explain-step` finds its page, and
# bash completes with the installed script.
# Usage: install_test.sh BUILD_DIR
set -euo pipefail
build=$1
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
for f in bin/attn-explain share/man/man1/attn-explain.1 share/man/man1/attn-explain-step.1 \
         share/man/zh_CN/man1/attn-explain-step.1 share/bash-completion/completions/attn-explain \
         share/zsh/vendor-completions/_attn-explain share/fish/vendor_completions.d/attn-explain.fish; do
  [ -s "$prefix/$f" ] || { echo "missing after install: $f"; exit 1; }
done
"$prefix/bin/attn-explain" step --no-pause >/dev/null
grep -q '^\.TH ATTN-EXPLAIN "\{0,1\}1' "$prefix/share/man/man1/attn-explain.1" || { echo "man page has no .TH header"; exit 1; }
for name in $("$prefix/bin/attn-explain" help --list); do
  [ -s "$prefix/share/man/man1/attn-explain-$name.1" ] || { echo "no man page attn-explain-$name(1)"; exit 1; }
done
if command -v man >/dev/null 2>&1; then
  page=$(MANPATH="$prefix/share/man" MANWIDTH=80 man attn-explain-step 2>&1 | col -b)
  case $page in *"attn-explain-step - Walk through self-attention"*) ;; *) echo "man attn-explain-step: $page" | head -5; exit 1;; esac
fi
words=$(bash -c 'source "$1"; COMP_WORDS=(attn-explain st); COMP_CWORD=1; _attn_explain; echo "${COMPREPLY[*]}"' _ \
        "$prefix/share/bash-completion/completions/attn-explain")
[ "$words" = "step" ] || { echo "bash completion of 'st' gave '$words'"; exit 1; }
words=$(bash -c 'source "$1"; COMP_WORDS=(attn-explain heads --batch-i); COMP_CWORD=2; _attn_explain; echo "${COMPREPLY[*]}"' _ \
        "$prefix/share/bash-completion/completions/attn-explain")
[ "$words" = "--batch-index" ] || { echo "bash completion of 'heads --batch-i' gave '$words'"; exit 1; }
words=$(bash -c 'source "$1"; COMP_WORDS=(attn-explain mistake no-sc); COMP_CWORD=2; _attn_explain; echo "${COMPREPLY[*]}"' _ \
        "$prefix/share/bash-completion/completions/attn-explain")
[ "$words" = "no-scale" ] || { echo "bash completion of 'mistake no-sc' gave '$words'"; exit 1; }
echo "install ok: $(cd "$prefix" && find . -type f | sort | tr '\n' ' ')"
