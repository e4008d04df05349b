#!/usr/bin/env bash
# Builds Kryoptic 1.5.4 statically linked with OpenSSL 3.5.5 into
#   target/pkcs11/libkryoptic_pkcs11.so
# Cached: a stamp file records the pins; a rerun with the same pins does nothing.
# Recipe and timings: see README "Test modules".
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
manifest="$root/tools/kryoptic/Cargo.toml"
out_dir="$root/target/pkcs11"
out="$out_dir/libkryoptic_pkcs11.so"
work="$root/target/kryoptic"
stamp="$out_dir/.kryoptic.stamp"

# The pins: change them in tools/kryoptic/Cargo.toml and this script rebuilds.
pins="$(sha256sum "$manifest" "$root/tools/kryoptic/src/lib.rs" "$0" | sha256sum | cut -c1-16)"
if [[ -f "$out" && -f "$stamp" && "$(cat "$stamp")" == "$pins" ]]; then
  echo "kryoptic: up to date ($out)"
  exit 0
fi

mkdir -p "$out_dir" "$work"
jobs="${KRYOPTIC_JOBS:-$(nproc)}"

echo "kryoptic: fetching crate sources"
cargo fetch --manifest-path "$manifest" --quiet

src_root="$(cargo metadata --manifest-path "$manifest" --format-version 1 \
  | python3 -c 'import json,sys; m=json.load(sys.stdin); print([p["manifest_path"] for p in m["packages"] if p["name"]=="openssl-src"][0])')"
ossl_src="$(dirname "$src_root")/openssl"
[[ -d "$ossl_src" ]] || { echo "kryoptic: OpenSSL sources not found at $ossl_src" >&2; exit 1; }

ossl_build="$work/openssl-3.5.5"
if [[ ! -f "$ossl_build/libcrypto.a" ]]; then
  echo "kryoptic: building OpenSSL 3.5.5 (libcrypto.a, ~2-3 min on 2 cores)"
  rm -rf "$ossl_build"
  cp -a "$ossl_src" "$ossl_build"
  (
    cd "$ossl_build"
    ./Configure no-deprecated no-aria no-argon2 no-atexit no-des no-dsa no-cast no-mdc2 \
      no-ec2m no-rc2 no-rc4 no-rc5 no-rmd160 no-seed no-sm2 no-sm3 no-sm4 no-docs no-tests \
      enable-ec_nistp_64_gcc_128 '-DDEVRANDOM=\"/dev/urandom\"' no-legacy no-shared >"$work/openssl-configure.log" 2>&1
    make -j"$jobs" build_generated >"$work/openssl-make.log" 2>&1
    make -j"$jobs" libcrypto.a >>"$work/openssl-make.log" 2>&1
  ) || { echo "kryoptic: OpenSSL build failed; last lines of the log:" >&2; tail -n 30 "$work"/openssl-*.log >&2; exit 1; }
fi

echo "kryoptic: building the PKCS#11 module (~2 min)"
KRYOPTIC_OPENSSL_SOURCES="$ossl_build" CARGO_BUILD_JOBS="$jobs" \
  cargo build --release --quiet --manifest-path "$manifest" --target-dir "$work/cargo"
cp "$work/cargo/release/libkryoptic_pkcs11.so" "$out.tmp"
mv -f "$out.tmp" "$out"
echo "$pins" >"$stamp"
echo "kryoptic: built $out"
