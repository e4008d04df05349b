#!/usr/bin/env bash
# The one build every test stage shares: the UI bundle, then the whole workspace, every target
# (libraries, binaries, the cdylib lunasim, tests, benches, examples) in the dev profile, with
# the app's embedded-UI feature on, and with clippy as the workspace's compiler.
#
# Clippy is a rustc driver: as RUSTC_WORKSPACE_WRAPPER it compiles the workspace's own crates
# as rustc would and runs its lints on them in the same pass. `cargo clippy` instead checks
# every dependency a second time in check mode (about 700 crates; eight of the ten minutes
# of a cold lint stage), and the tests then build them again. Lint warnings and compiler
# warnings of the workspace's crates fail the build (-D warnings), as `cargo clippy -- -D
# warnings` did. Dependencies are compiled by plain rustc, as in any build.
#
# Every stage (lint, rust, e2e) and scripts/run.sh build with this same command line and
# environment, so each finds the others' build up to date instead of rebuilding for a
# different feature set.
#   scripts/build.sh [CARGO_ARGS...]     e.g. scripts/build.sh --quiet
#   scripts/build.sh nextest [ARGS...]   runs `cargo nextest run` over the same build
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-2}"

clippy_driver="$(rustup which clippy-driver 2>/dev/null || command -v clippy-driver || true)"
[[ -x "$clippy_driver" ]] || { echo "build: clippy-driver not found: rustup component add clippy" >&2; exit 1; }
export RUSTC_WORKSPACE_WRAPPER="$clippy_driver"
# What `cargo clippy -- -D warnings` hands the driver (its argument list, joined this way).
export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
features=(--workspace --features hsm-console/custom-protocol)

# The app embeds ui/dist at compile time (custom-protocol): build it first.
scripts/build-ui.sh

if [[ "${1:-}" == nextest ]]; then
  shift
  cargo build --all-targets "${features[@]}" --quiet
  exec cargo nextest run "${features[@]}" "$@"
fi
exec cargo build --all-targets "${features[@]}" "$@"
