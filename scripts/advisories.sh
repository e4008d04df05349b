#!/usr/bin/env bash
# Known advisories, offline: `cargo deny check advisories` over every lock file the console
# ships or builds with (the workspace, the Kryoptic module in the .deb, the fuzz targets),
# against a local copy of the RustSec advisory database: $HSMC_ADVISORY_DB, or
# ../shared/advisory-db next to the checkout. Skipped, with a line saying so, when there is
# none. Accepted advisories are listed with their reasons in deny.toml.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
db="${HSMC_ADVISORY_DB:-}"
if [[ -z "$db" && -d "$root/../shared/advisory-db/crates" ]]; then db="$root/../shared/advisory-db"; fi
if [[ -z "$db" || ! -d "$db/crates" ]]; then
  echo "advisories: skipped — no local RustSec database (set HSMC_ADVISORY_DB=PATH, or place it at ../shared/advisory-db)"
  exit 0
fi
deny="$root/target/tools/bin/cargo-deny"
[[ -x "$deny" ]] || { echo "advisories: cargo-deny missing: run scripts/setup.sh test"; exit 1; }
# cargo-deny reads the database from a git checkout at <db-path>/advisory-db-<url hash>; a
# snapshot that is a plain folder is committed into a temporary one.
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
repo="$work/advisory-db-3157b0e258782691"
if [[ -d "$db/.git" ]]; then
  git clone -q "$db" "$repo"
else
  cp -r "$db" "$repo"
  git -C "$repo" init -q
  git -C "$repo" add -A
  git -C "$repo" -c user.name=snapshot -c user.email=snapshot@localhost commit -q -m snapshot
fi
sed "s|^\[advisories\]|[advisories]\ndb-path = \"$work\"\ndb-urls = [\"https://github.com/rustsec/advisory-db\"]|" "$root/deny.toml" >"$work/deny.toml"
echo "advisories: database $(head -c 120 "$db/SNAPSHOT" 2>/dev/null | head -1 || echo "$db")"
status=0
for manifest in Cargo.toml tools/kryoptic/Cargo.toml fuzz/Cargo.toml; do
  # cargo-deny runs offline: the lock file's crates must be in the local registry cache
  # (on a fresh machine the fuzz targets' are not until the fuzz stage builds them).
  if ! cargo fetch --locked -q --manifest-path "$root/$manifest"; then
    echo "advisories: cannot fetch the crates of $manifest"
    status=1
    continue
  fi
  if "$deny" --offline --log-level error --manifest-path "$root/$manifest" --config "$work/deny.toml" check advisories; then
    echo "advisories: $manifest ok"
  else
    echo "advisories: $manifest has unaccepted advisories (above)"
    status=1
  fi
done
exit $status
