# Sourced by scripts/build-kryoptic.sh and scripts/build-openssl35.sh: a configured OpenSSL
# 3.5.5 tree with libcrypto.a at target/kryoptic/openssl-3.5.5, from the sources the pinned
# `openssl-src` crate of tools/kryoptic carries (no other download).
#   ensure_openssl_tree ROOT JOBS   → prints nothing; exits the script on failure
ensure_openssl_tree() {
  local root="$1" jobs="$2"
  local manifest="$root/tools/kryoptic/Cargo.toml" work="$root/target/kryoptic"
  local ossl_build="$work/openssl-3.5.5"
  [[ -f "$ossl_build/libcrypto.a" ]] && return 0
  mkdir -p "$work"
  echo "openssl: fetching crate sources"
  cargo fetch --manifest-path "$manifest" --quiet
  local src_root ossl_src
  src_root="$(cargo metadata --manifest-path "$manifest" --format-version 1 \
    | python3 -c 'import json,sys; m=json.load(sys.stdin); print([p["manifest_path"] for p in m["packages"] if p["name"]=="openssl-src"][0])')"
  ossl_src="$(dirname "$src_root")/openssl"
  [[ -d "$ossl_src" ]] || { echo "openssl: OpenSSL sources not found at $ossl_src" >&2; exit 1; }
  echo "openssl: building OpenSSL 3.5.5 (libcrypto.a, ~2-3 min on 2 cores)"
  rm -rf "$ossl_build"
  cp -a "$ossl_src" "$ossl_build"
  (
    cd "$ossl_build"
    # -O1, not OpenSSL's -O3: a quarter less compile time (200 against 266 CPU seconds for
    # libcrypto on the CI machine kind). The hashes, AES and the big-number arithmetic are
    # OpenSSL's assembly, which the level does not touch; the C it compiles here serves test
    # tokens and a test verifier, never an officer's key.
    ./Configure no-deprecated no-aria no-argon2 no-atexit no-des no-dsa no-cast no-mdc2 \
      no-ec2m no-rc2 no-rc4 no-rc5 no-rmd160 no-seed no-sm2 no-sm3 no-sm4 no-docs no-tests \
      enable-ec_nistp_64_gcc_128 '-DDEVRANDOM=\"/dev/urandom\"' no-legacy no-shared -O1 >"$work/openssl-configure.log" 2>&1
    make -j"$jobs" build_generated >"$work/openssl-make.log" 2>&1
    make -j"$jobs" libcrypto.a >>"$work/openssl-make.log" 2>&1
  ) || { echo "openssl: OpenSSL build failed; last lines of the log:" >&2; tail -n 30 "$work"/openssl-*.log >&2; exit 1; }
}
