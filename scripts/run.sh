#!/usr/bin/env bash
# Builds and starts the desktop console. With no module configured it opens on the
# built-in lunasim partition (a software emulator kept in ~/.local/share/hsm-console).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-2}"
scripts/build-ui.sh
cargo build --quiet -p hsmc-lunasim -p hsmc-cli
cargo build --quiet --bin hsm-console --features custom-protocol
if [[ -z "${DISPLAY:-}" && -z "${WAYLAND_DISPLAY:-}" ]]; then
  echo "run: no display. On a headless machine: xvfb-run -a target/debug/hsm-console" >&2
  exit 1
fi
exec "$root/target/debug/hsm-console" "$@"
