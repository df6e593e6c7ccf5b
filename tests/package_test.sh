#!/usr/bin/env bash
# `cpack -G DEB` builds a Debian package of the build (CPack settings at the end of the top-level
# CMakeLists.txt): its contents list the binary, a man page per command (English and Chinese) and
# the bash, zsh and fish completions in Debian's paths; its Depends names the runtime libraries the
# binary links; and extracted into a temporary root (dpkg -x) the binary runs the walkthrough.
# Skipped (77) where dpkg-deb is missing. Usage: package_test.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
command -v dpkg-deb >/dev/null 2>&1 || { echo "no dpkg-deb: skipped"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && cpack --config "$build/CPackConfig.cmake" -G DEB -B "$work/out" >/dev/null)
deb=$(ls "$work"/out/attn-explain_*.deb)
[ -s "$deb" ] || { echo "cpack made no attn-explain_*.deb"; exit 1; }
contents=$(dpkg-deb --contents "$deb")
for f in ./usr/bin/attn-explain ./usr/share/man/man1/attn-explain.1 ./usr/share/man/man1/attn-explain-step.1 \
         ./usr/share/man/zh_CN/man1/attn-explain-step.1 ./usr/share/bash-completion/completions/attn-explain \
         ./usr/share/zsh/vendor-completions/_attn-explain ./usr/share/fish/vendor_completions.d/attn-explain.fish; do
  grep -q " $f\$" <<<"$contents" || { echo "the package lacks $f"; echo "$contents"; exit 1; }
done
for name in $("$build/attn-explain" help --list); do
  grep -q " ./usr/share/man/man1/attn-explain-$name.1\$" <<<"$contents" || { echo "the package lacks attn-explain-$name(1)"; exit 1; }
done
depends=$(dpkg-deb --field "$deb" Depends)
for lib in $(objdump -p "$build/attn-explain" | awk '/NEEDED/ {print $2}'); do
  case $lib in
    liblapack.so.3) pkg=liblapack3;;  # any LAPACK: liblapack3 or the virtual liblapack.so.3
    libm.so.6) pkg=libc6;;
    *) pkg=$(dpkg -S "*/$lib" 2>/dev/null | sed -n '1s/:.*//p');;
  esac
  [ -n "$pkg" ] || { echo "no package owns $lib"; exit 1; }
  grep -q "\b$pkg\b" <<<"$depends" || { echo "Depends '$depends' lacks $pkg (for $lib)"; exit 1; }
done
[ -n "$(dpkg-deb --field "$deb" Maintainer)" ] || { echo "the package has no Maintainer"; exit 1; }
dpkg -x "$deb" "$work/root"
out=$(cd "$work" && "$work/root/usr/bin/attn-explain" step --no-pause)
grep -q "Summary" <<<"$out" || { echo "the packaged attn-explain step printed no summary"; exit 1; }
page=$(MANPATH="$work/root/usr/share/man" MANWIDTH=80 man attn-explain-step 2>/dev/null | col -b || true)
if command -v man >/dev/null 2>&1; then
  case $page in *"attn-explain-step - "*) ;; *) echo "man attn-explain-step from the package: $page" | head -3; exit 1;; esac
fi
echo "package ok: $(basename "$deb"), Depends: $depends"
