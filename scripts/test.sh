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
fuzz_pid=""
# shellcheck disable=SC2317 # called by the trap
end_run() {
  # A run that ends early (a signal, an error) stops the background fuzzers with it.
  [[ -n "$fuzz_pid" ]] && kill -TERM -- "-$fuzz_pid" 2>/dev/null
  rm -rf "$logs"
}
trap end_run EXIT
declare -a why=()

stage() {
  local name="$1"; shift
  local t0=$SECONDS log="$logs/${#results[@]}.log"
  echo
  echo "=== $name"
  "$@" 2>&1 | tee "$log"
  if ((PIPESTATUS[0] == 0)); then
    results+=("PASS  $name ($((SECONDS - t0)) s, $(free_disk) free after)")
    # What a passing stage wants the summary to say (a line starting "note: ").
    local notes
    notes=$(grep -E "^note: " "$log" | tail -n 5 | sed 's/^/      /') || true
    [[ -z "$notes" ]] || results+=("$notes")
  else
    results+=("FAIL  $name ($((SECONDS - t0)) s, $(free_disk) free after)")
    failed=1
    # The lines that say what went wrong (test failures, panics, timeouts), else the stage's
    # last lines; then, whole, the last failure report a stage printed ("=== ... failure
    # report" to the end: the e2e's app and driver logs and the kernel's crash lines).
    local lines report
    report=$(awk '/^=== .*failure report$/ { n = NR; buf = "" } n { buf = buf $0 ORS } END { printf "%s", buf }' "$log" | head -n 80)
    lines=$(grep -E "FAIL|FAILED|panicked|[Ee]rror|timed out|no screenshot|--- |SIG[A-Z]+|[Aa]bort" "$log" |
      grep -vxF -f <(printf '%s\n' "$report") | tail -n 40)
    [[ -n "$lines$report" ]] || lines=$(tail -n 40 "$log")
    why+=("--- why: $name" "$lines" ${report:+"$report"})
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
# Each is a function of the files under ui/ (sources, tests, configs, the lint rules, the
# generated bindings, the lock file the packages come from), the catalogs in locales/ and
# Node's version. So, as build tools keep a task's result under its inputs' hash, their
# joint verdict is kept under a hash of all of those: when not one byte changed since a run
# in which all three passed, that verdict stands (ESLint alone is ~55 CPU seconds, which a
# Rust-only change spent for nothing), and a change to any of them runs all three again.
# ESLint's own --cache is per file and would be wrong here: the typed rule
# (hsmc/no-backend-english) reads types from other files, so a file's verdict can change
# when only the bindings did.
# tsc also checks incrementally: its build info records each file's content hash and the
# diagnostics, so a changed UI is checked again only where it must be.
# Both files live in target/debug, so they are kept wherever the Rust build is (.ci/run
# keeps that directory between runs).
lint_ui() {
  [[ -f ui/package.json ]] || return 0
  local memo="$root/target/debug/ui-lint.passed" inputs
  inputs="$( (node --version && find ui locales -path ui/node_modules -prune -o -path ui/dist -prune -o -path ui/dist-mock -prune \
      -o -type f -print0 | sort -z | xargs -0 sha256sum) | sha256sum | cut -c1-64)"
  if [[ -f "$memo" && "$(cat "$memo")" == "$inputs" ]]; then
    echo "ui lint: no file under ui/ or locales/ changed since prettier, eslint and tsc last passed on them ($inputs)"
    return 0
  fi
  (cd ui && npm run --silent format:check && npm run --silent lint &&
    npm run --silent typecheck -- --incremental --tsBuildInfoFile "$root/target/debug/ui.tsbuildinfo") &&
    mkdir -p "$(dirname "$memo")" && echo "$inputs" >"$memo"
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

# Fuzzing is CPU-bound and needs nothing the other stages make, while the rust and e2e
# stages leave a quarter to two fifths of the two cores idle (tests waiting on their tools,
# servers and timers). So when it runs with other stages, the fuzz stage starts first, in the
# background and at the lowest priority (nice 19): it takes the CPU the others leave, and a
# waiting test gets its core back as soon as it wakes. Each target still gets its whole
# budget of CPU time (scripts/fuzz.sh counts CPU seconds, not seconds on the clock), so the
# fuzzing is the same; the fuzz stage, in its turn, waits for what is left and reports it.
# One input's time limit (libFuzzer's hang report) is on the clock, and at the lowest
# priority the clock runs on while the tests hold both cores (the fuzzers then get a few
# per cent of the CPU): 60 s instead of 10 here, so that an input that is merely slow (the
# OpenPGP target's average 1.3 ms, a slow one many times that) and kept waiting is not
# reported as a hang. A real hang still is: it never ends.
# HSMC_FUZZ_BACKGROUND=0 runs it in its turn instead.
fuzz_seconds="${HSMC_FUZZ_SECONDS:-20}"
if ((${#stages[@]} > 1)) && [[ " ${stages[*]} " == *" fuzz "* && "${HSMC_FUZZ_BACKGROUND:-1}" != 0 ]]; then
  # Its own session (setsid), so that end_run can stop the whole process group. With the
  # kernel's autogroups (Debian's default), a session is also a scheduling group, and the
  # kernel shares the CPU fairly between groups whatever the nice values inside them: the
  # new group itself is set to nice 19 (/proc/self/autogroup), else the fuzzers would take
  # half the machine from the tests (measured: the Rust tests' total time 698 s → 890 s).
  # Its exit status goes to a file: the stage runs in a pipeline's subshell, which cannot
  # `wait` for it.
  setsid bash -c '{ [[ -w /proc/self/autogroup ]] && echo 19 >/proc/self/autogroup; } 2>/dev/null
    HSMC_FUZZ_UNIT_TIMEOUT=60 nice -n 19 scripts/fuzz.sh "$1"; echo $? >"$2.rc"' fuzz "$fuzz_seconds" "$logs/fuzz" \
    >"$logs/fuzz.log" 2>&1 &
  fuzz_pid=$!
  fuzz_t0=$SECONDS
fi

fuzz_targets() {
  if [[ -z "$fuzz_pid" ]]; then
    scripts/fuzz.sh "$fuzz_seconds"
    return
  fi
  echo "fuzz: running in the background since the run began ($((SECONDS - fuzz_t0)) s ago), at the lowest priority"
  # Until it writes its status; a background job killed before it could (the OOM killer)
  # fails the stage instead of leaving the run waiting.
  while [[ ! -f "$logs/fuzz.rc" ]] && kill -0 "$fuzz_pid" 2>/dev/null; do sleep 0.5; done
  cat "$logs/fuzz.log"
  if [[ ! -f "$logs/fuzz.rc" ]]; then
    echo "fuzz: the background fuzzing ended without an exit status (killed?)"
    return 1
  fi
  return "$(cat "$logs/fuzz.rc")"
}

for s in "${stages[@]}"; do
  case "$s" in
    lint) stage "lint (rustfmt, clippy -D warnings, licenses, advisories, prettier, eslint, tsc)" lint_all ;;
    rust) stage "rust tests (nextest, real tokens)" rust_tests ;;
    ui) stage "ui (build, browser tests)" ui_checks ;;
    e2e) stage "e2e (real app under Xvfb)" e2e_tests ;;
    fuzz) stage "fuzz (cargo-fuzz, every parser, ${fuzz_seconds} CPU seconds each)" fuzz_targets ;;
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
