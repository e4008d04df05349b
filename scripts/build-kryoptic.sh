#!/usr/bin/env bash
# Builds Kryoptic 1.5.4 statically linked with OpenSSL 3.5.5 into
#   target/pkcs11/libkryoptic_pkcs11.so
# Cached: a stamp file records the pins; a rerun with the same pins does nothing.
#   scripts/build-kryoptic.sh --check   exits 0 when up to date, 1 when a build is needed
# Recipe and timings: the book's "Modules and test tokens" page (docs/src/modules.md).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
manifest="$root/tools/kryoptic/Cargo.toml"
out_dir="$root/target/pkcs11"
out="$out_dir/libkryoptic_pkcs11.so"
work="$root/target/kryoptic"
stamp="$out_dir/.kryoptic.stamp"

# The pins: change them in tools/kryoptic/Cargo.toml and this script rebuilds.
# Contents only: sha256sum's output names each file by its path, which made every clone at
# another path (each CI run) rebuild a module it had in its cache.
pins="$(cat "$manifest" "$root/tools/kryoptic/src/lib.rs" "$0" "$root/scripts/openssl-tree.sh" | sha256sum | cut -c1-16)"
if [[ -f "$out" && -f "$stamp" && "$(cat "$stamp")" == "$pins" ]]; then
  [[ "${1:-}" == --check ]] || echo "kryoptic: up to date ($out)"
  exit 0
fi
# --check: only say (by the exit status) whether a build is needed.
[[ "${1:-}" == --check ]] && exit 1

mkdir -p "$out_dir" "$work"
jobs="${KRYOPTIC_JOBS:-$(nproc)}"

# shellcheck source=scripts/openssl-tree.sh
source "$root/scripts/openssl-tree.sh"
ensure_openssl_tree "$root" "$jobs"
ossl_build="$work/openssl-3.5.5"

echo "kryoptic: building the PKCS#11 module (~2 min)"
KRYOPTIC_OPENSSL_SOURCES="$ossl_build" CARGO_BUILD_JOBS="$jobs" \
  cargo build --release --quiet --manifest-path "$manifest" --target-dir "$work/cargo"
cp "$work/cargo/release/libkryoptic_pkcs11.so" "$out.tmp"
mv -f "$out.tmp" "$out"
echo "$pins" >"$stamp"
echo "kryoptic: built $out"
