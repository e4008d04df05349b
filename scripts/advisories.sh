#!/usr/bin/env bash
# Known advisories, offline: every lock file the console ships or builds with (the workspace,
# the Kryoptic module in the .deb, the fuzz targets) against a local copy of the RustSec
# advisory database: $HSMC_ADVISORY_DB, or ../shared/advisory-db next to the checkout.
# Skipped, with a line saying so, when there is none. Accepted advisories are listed with
# their reasons in advisories.toml. The check is crates/advisories (the RustSec project's
# own client library); it reads the lock files only, so nothing needs to be fetched.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
db="${HSMC_ADVISORY_DB:-}"
if [[ -z "$db" && -d "$root/../shared/advisory-db/crates" ]]; then db="$root/../shared/advisory-db"; fi
if [[ -z "$db" || ! -d "$db/crates" ]]; then
  echo "advisories: skipped — no local RustSec database (set HSMC_ADVISORY_DB=PATH, or place it at ../shared/advisory-db)"
  exit 0
fi
echo "advisories: database $(head -c 120 "$db/SNAPSHOT" 2>/dev/null | head -1 || echo "$db")"
cd "$root"
cargo run --quiet -p hsmc-advisories -- --db "$db" --policy advisories.toml \
  Cargo.lock tools/kryoptic/Cargo.lock fuzz/Cargo.lock
