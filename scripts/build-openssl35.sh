#!/usr/bin/env bash
# Builds OpenSSL 3.5's `openssl` program from the tree Kryoptic's libcrypto is built in (the
# same 3.5.5 sources, scripts/openssl-tree.sh), into
#   target/tools/openssl-3.5/bin/openssl
# Used only by the tests, as a verifier of another lineage for ML-DSA and SLH-DSA CMS
# (`openssl cms -verify`), which Debian 12's OpenSSL 3.0 cannot read. Never installed, never
# put on PATH: the tests call it by this path.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
tree="$root/target/kryoptic/openssl-3.5.5"
out_dir="$root/target/tools/openssl-3.5/bin"
out="$out_dir/openssl"
if [[ -x "$out" ]] && "$out" version | grep -q '^OpenSSL 3\.5\.'; then
  [[ "${1:-}" == --check ]] || echo "openssl-3.5: present ($out)"
  exit 0
fi
# --check: only say (by the exit status) whether a build is needed.
[[ "${1:-}" == --check ]] && exit 1
jobs="${KRYOPTIC_JOBS:-$(nproc)}"
# shellcheck source=scripts/openssl-tree.sh
source "$root/scripts/openssl-tree.sh"
ensure_openssl_tree "$root" "$jobs"
echo "openssl-3.5: building the openssl program (~1 min on 2 cores)"
(cd "$tree" && make -j"$jobs" apps/openssl >"$root/target/kryoptic/openssl-apps.log" 2>&1) \
  || { echo "openssl-3.5: build failed; last lines of the log:" >&2; tail -n 30 "$root/target/kryoptic/openssl-apps.log" >&2; exit 1; }
mkdir -p "$out_dir"
cp "$tree/apps/openssl" "$out.tmp"
mv -f "$out.tmp" "$out"
"$out" version
