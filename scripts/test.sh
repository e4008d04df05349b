#!/usr/bin/env bash
# Runs every test stage and reports each; exits non-zero when any failed.
#   scripts/test.sh            all stages
#   scripts/test.sh STAGE...   only those (lint, rust, ui, e2e, fuzz)
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-2}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
# Incremental caches only pay off when the same tree is rebuilt after small edits; a test run
# from a clean clone would write gigabytes of them. Set CARGO_INCREMENTAL=1 to keep them.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
stages=("$@")
((${#stages[@]})) || stages=(lint rust ui e2e fuzz)

declare -a results=()
failed=0

free_disk() { df -h --output=avail . | tail -1 | tr -d ' '; }

# A build that runs out of disk fails deep inside rustc or the linker; say it up front.
need_gb=15
avail_gb=$(($(df -k --output=avail . | tail -1) / 1048576))
if ((avail_gb < need_gb)); then
  echo "warning: ${avail_gb} GiB free on $(df --output=target . | tail -1); a cold test run needs about ${need_gb} GiB (target/ holds every build)" >&2
fi

# Each stage's output is kept, so that the end of the run can repeat why a stage failed:
# a long run's log is often read from its last lines only.
logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
declare -a why=()

stage() {
  local name="$1"; shift
  local t0=$SECONDS log="$logs/${#results[@]}.log"
  echo
  echo "=== $name"
  "$@" 2>&1 | tee "$log"
  if ((PIPESTATUS[0] == 0)); then
    results+=("PASS  $name ($((SECONDS - t0)) s, $(free_disk) free after)")
  else
    results+=("FAIL  $name ($((SECONDS - t0)) s, $(free_disk) free after)")
    failed=1
    # The lines that say what went wrong (test failures, panics, timeouts, the app's log),
    # else the stage's last lines.
    local lines
    lines=$(grep -E "FAIL|FAILED|panicked|[Ee]rror|timed out|no screenshot|--- |SIG[A-Z]+|[Aa]bort" "$log" | tail -n 40)
    [[ -n "$lines" ]] || lines=$(tail -n 40 "$log")
    why+=("--- why: $name" "$lines")
  fi
}

# Clippy runs inside the shared build (scripts/build.sh), which the later stages reuse.
lint_all() {
  cargo fmt --all -- --check && scripts/build.sh --quiet &&
    python3 scripts/licenses.py && scripts/advisories.sh && lint_ui && book
}

# The book in docs/ (mdBook): it must build.
book() {
  "$root/target/tools/bin/mdbook" build docs
}

# The UI's formatter, linter and type-checker: static checks, like rustfmt and clippy.
# tsc checks incrementally: its build info records each file's content hash and the
# diagnostics, so an unchanged UI is checked in about 4 s instead of 21 s, and a changed file
# (or anything it depends on) is checked again. The build info lives in target/debug, so it
# is kept wherever the Rust build is (.ci/run keeps that directory between runs).
lint_ui() {
  [[ -f ui/package.json ]] || return 0
  (cd ui && npm run --silent format:check && npm run --silent lint &&
    npm run --silent typecheck -- --incremental --tsBuildInfoFile "$root/target/debug/ui.tsbuildinfo")
}

rust_tests() {
  # The tests' files (tokens, trails, PostgreSQL clusters, artifacts) go to a RAM-backed
  # directory when the machine has 4 GiB free in one. The trails and PostgreSQL sync to disk
  # at every commit, and on the CI machine's disk the cores sat waiting for it (two tests
  # of large sealed trails: 17.7 s on disk, 14.0 s in RAM, the same CPU). Nothing the tests
  # prove needs a disk: kill -9 ends a process, not the kernel that holds its writes.
  # HSMC_TEST_TMPDIR chooses another place; set empty, TMPDIR is left as it is.
  local tmp="${HSMC_TEST_TMPDIR-/dev/shm/hsmc-tests}"
  if [[ -n "$tmp" ]] && mkdir -p "$tmp" 2>/dev/null && chmod 1777 "$tmp" &&
    (($(df -k --output=avail "$tmp" | tail -1) > 4 * 1024 * 1024)); then
    echo "rust: test files in $tmp"
    export TMPDIR="$tmp"
  fi
  # The shared build holds the cdylib and binaries the tests load or spawn.
  scripts/build.sh nextest --profile ci
}

ui_checks() {
  [[ -f ui/package.json ]] || { echo "no UI yet"; return 0; }
  scripts/build-ui.sh && (cd ui && npm run --silent test)
}

e2e_tests() {
  [[ -f tests/e2e/run.sh ]] || { echo "no e2e yet"; return 0; }
  tests/e2e/run.sh
}

fuzz_targets() {
  scripts/fuzz.sh "${HSMC_FUZZ_SECONDS:-20}"
}

for s in "${stages[@]}"; do
  case "$s" in
    lint) stage "lint (rustfmt, clippy -D warnings, licenses, advisories, prettier, eslint, tsc)" lint_all ;;
    rust) stage "rust tests (nextest, real tokens)" rust_tests ;;
    ui) stage "ui (build, browser tests)" ui_checks ;;
    e2e) stage "e2e (real app under Xvfb)" e2e_tests ;;
    fuzz) stage "fuzz (cargo-fuzz, every parser, bounded time)" fuzz_targets ;;
    *) echo "unknown stage $s"; exit 2 ;;
  esac
done

if ((${#why[@]})); then
  echo
  echo "=== what failed"
  printf '%s\n' "${why[@]}"
fi
echo
echo "=== summary"
printf '%s\n' "${results[@]}"
exit $failed
