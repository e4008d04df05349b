#!/usr/bin/env bash
# Builds the Debian package of the desktop app with the Tauri CLI:
#   target/release/bundle/deb/HSM Console_<version>_amd64.deb
# The package carries the built-in partition (lunasim + Kryoptic) as resources, and the
# command line (hsmc, and hsmc-gpg for git) in /usr/bin.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-2}"
cargo build --release -p hsmc-lunasim -p hsmc-cli
cp target/release/liblunasim.so target/pkcs11/liblunasim.so
# The frontend is ui/ (the CLI would otherwise take the parent folder of tauri.conf.json).
TAURI_FRONTEND_PATH="$root/ui" ui/node_modules/.bin/tauri build --bundles deb --config tauri.deb.conf.json
ls -l target/release/bundle/deb/*.deb
# The command line is in the package, where PATH finds it.
for deb in target/release/bundle/deb/*.deb; do
  # The listing first: with pipefail, `dpkg-deb -c | grep -q` fails when grep stops early.
  listing="$(dpkg-deb -c "$deb")"
  for bin in hsmc hsmc-gpg; do
    grep -qE " (\./)?usr/bin/$bin\$" <<<"$listing" || { echo "build-deb: $deb lacks /usr/bin/$bin" >&2; exit 1; }
  done
done
