#!/usr/bin/env bash
# Builds the static release for x86_64 Linux (musl): target/dist/zero-<version>-<target>.tar.gz
# and target/dist/SHA256SUMS. Adds the Rust target and Debian's musl C toolchain if missing.
set -euo pipefail
cd "$(dirname "$0")/.."

target=x86_64-unknown-linux-musl
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
name="zero-$version-$target"

if ! rustup target list --installed | grep -qx "$target"; then
  rustup target add "$target"
fi
if ! command -v musl-gcc >/dev/null; then
  # ring compiles C and assembly, which needs a musl C compiler.
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get install -y musl-tools || { $sudo apt-get update && $sudo apt-get install -y musl-tools; }
fi

CC_x86_64_unknown_linux_musl=musl-gcc cargo build --release --locked --target "$target"
binary="target/$target/release/zero"

# The binary must be static and run with an empty environment, as in a bare container.
file "$binary" | grep -Eq 'statically linked|static-pie linked' || { file "$binary"; echo "not a static binary" >&2; exit 1; }
env -i "$binary" --version

dist=target/dist
rm -rf "$dist" && mkdir -p "$dist"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir "$stage/$name"
cp "$binary" README.md LICENSE "$stage/$name/"
tar -C "$stage" -czf "$dist/$name.tar.gz" "$name"
(cd "$dist" && sha256sum "$name.tar.gz" > SHA256SUMS)
echo "$dist/$name.tar.gz ($(du -k "$binary" | cut -f1) KiB binary)"
cat "$dist/SHA256SUMS"
