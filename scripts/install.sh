#!/bin/sh
# Installs zero from a release tarball, a local path or a URL, after checking it against the
# SHA256SUMS file beside it (or given as the second argument). A tarball whose checksum does
# not match is refused and nothing is installed.
#
#   scripts/install.sh zero-0.1.0-x86_64-unknown-linux-musl.tar.gz [SHA256SUMS]
#   PREFIX=/usr/local scripts/install.sh https://example.com/zero-0.1.0-x86_64-unknown-linux-musl.tar.gz
#
# Installs into $PREFIX/bin (default: $HOME/.local/bin).
set -eu

tarball=${1:?usage: install.sh TARBALL [SHA256SUMS]}
sums=${2:-}
prefix=${PREFIX:-$HOME/.local}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fetch() { # fetch SOURCE DEST: copies a path or downloads a URL
  case "$1" in
    http://*|https://*) curl -fsSL "$1" -o "$2" ;;
    *) cp "$1" "$2" ;;
  esac
}

name=$(basename "$tarball")
fetch "$tarball" "$work/$name"
if [ -z "$sums" ]; then
  sums="$(dirname "$tarball")/SHA256SUMS"
fi
fetch "$sums" "$work/SHA256SUMS"

expected=$(awk -v n="$name" '$2 == n || $2 == "*" n { print $1 }' "$work/SHA256SUMS")
if [ -z "$expected" ]; then
  echo "install: $name is not listed in SHA256SUMS; refusing to install" >&2
  exit 1
fi
actual=$(sha256sum "$work/$name" | cut -d ' ' -f 1)
if [ "$expected" != "$actual" ]; then
  echo "install: checksum mismatch for $name (expected $expected, got $actual); refusing to install" >&2
  exit 1
fi

tar -C "$work" -xzf "$work/$name"
binary=$(find "$work" -type f -name zero | head -n 1)
[ -n "$binary" ] || { echo "install: no zero binary in $name" >&2; exit 1; }
mkdir -p "$prefix/bin"
install -m 755 "$binary" "$prefix/bin/zero"
echo "installed $prefix/bin/zero ($("$prefix/bin/zero" --version))"
case ":$PATH:" in
  *":$prefix/bin:"*) ;;
  *) echo "install: warning: $prefix/bin is not on PATH; add it (export PATH=\"$prefix/bin:\$PATH\") or run $prefix/bin/zero" >&2 ;;
esac
