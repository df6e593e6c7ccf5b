#!/usr/bin/env bash
# By hand, not in CI (it downloads a Debian system, about 150 MB): the .deb installs with apt on a
# fresh Debian 12 and runs. debootstrap makes a minimal bookworm in a temporary folder, apt installs
# the package there (pulling its Depends from the mirror), and the installed binary runs
# `attn-explain step --no-pause` and finds its man pages and completions. Needs root, debootstrap
# and the network. Usage: tests/package_chroot.sh BUILD_DIR [MIRROR]
set -euo pipefail
build=$(cd "$1" && pwd)
mirror=${2:-http://deb.debian.org/debian}
[ "$(id -u)" = 0 ] || { echo "run as root (debootstrap and chroot)"; exit 2; }
command -v debootstrap >/dev/null 2>&1 || { echo "install debootstrap first: apt-get install debootstrap"; exit 2; }
root=$(mktemp -d)
cleanup() { umount "$root/sys/proc" 2>/dev/null || true; rm -rf --one-file-system "$root"; }
trap cleanup EXIT
(cd "$root" && cpack --config "$build/CPackConfig.cmake" -G DEB -B "$root/out" >/dev/null)
deb=$(ls "$root"/out/attn-explain_*.deb)
mkdir "$root/sys"
debootstrap --variant=minbase bookworm "$root/sys" "$mirror" >"$root/debootstrap.log" 2>&1 ||
  { tail -20 "$root/debootstrap.log"; exit 1; }
cp "$deb" "$root/sys/tmp/"
cp /etc/resolv.conf "$root/sys/etc/resolv.conf"
mount -t proc proc "$root/sys/proc"
chroot "$root/sys" /bin/bash -euo pipefail -c '
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq /tmp/attn-explain_*.deb >/dev/null
  attn-explain step --no-pause > /tmp/step.txt
  grep -q "Step 1 of" /tmp/step.txt
  test -f /usr/share/man/man1/attn-explain-step.1.gz || test -f /usr/share/man/man1/attn-explain-step.1
  test -f /usr/share/bash-completion/completions/attn-explain
  test -f /usr/share/zsh/vendor-completions/_attn-explain
  test -f /usr/share/fish/vendor_completions.d/attn-explain.fish
  echo "installed with apt on a fresh Debian $(cat /etc/debian_version): attn-explain step ran ($(wc -l < /tmp/step.txt) lines)"'
