#!/usr/bin/env bash
# Fuzz every parser the console owns (fuzz/fuzz_targets) for a bounded time each with
# cargo-fuzz + libFuzzer. Prints one JSON line per target and exits non-zero on a crash,
# a leak of the time budget (hang) or a target that does not build.
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]      (default 30 s, every target)
# Corpora: the committed seeds (fuzz/seeds/TARGET, read-only) plus everything earlier runs
# found, kept in $HSMC_FUZZ_CORPUS (default ~/.cache/hsm-console-fuzz/TARGET) so each run
# starts where the last stopped. Crash inputs go to tests/artifacts/fuzz/.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
secs="${1:-${HSMC_FUZZ_SECONDS:-20}}"
shift || true
tools="$root/target/tools"
export PATH="$tools/bin:$PATH"
if ! command -v cargo-fuzz >/dev/null; then
  echo "fuzz: installing cargo-fuzz into target/tools (once)"
  cargo install --quiet --locked --debug cargo-fuzz --version 0.13.2 --root "$tools"
fi
# The machine has one (stable) toolchain; libFuzzer's coverage flags are nightly-only, so
# the fuzz build alone unlocks them on stable. Nothing else is built this way.
export RUSTC_BOOTSTRAP=1
export CARGO_TARGET_DIR="$root/target/fuzz"
corpus_root="${HSMC_FUZZ_CORPUS:-$HOME/.cache/hsm-console-fuzz}"
artifacts="$root/tests/artifacts/fuzz"
mkdir -p "$artifacts"
targets=("$@")
((${#targets[@]})) || mapfile -t targets < <(cd fuzz && cargo fuzz list)

(cd fuzz && cargo fuzz build --sanitizer none --release)
# The targets run as the programs that build made, not through `cargo fuzz run`: each of
# those would check the whole build again under cargo's lock (together about 18 s of the
# stage, beyond its fuzzing time).
bin="$CARGO_TARGET_DIR/$(rustc -vV | sed -n 's/^host: //p')/release"

# Targets run side by side, one per core (HSMC_FUZZ_JOBS to choose): libFuzzer is one
# process per target, so on N cores N targets take the time of one.
parallel="${HSMC_FUZZ_JOBS:-$(nproc)}"
results="$(mktemp -d)"
trap 'rm -rf "$results"' EXIT

fuzz_one() {
  local t="$1" corpus="$corpus_root/$1" log="$results/$1.log" rc=0
  mkdir -p "$corpus"
  (cd fuzz && "$bin/$t" "$corpus" "seeds/$t" \
    -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$artifacts/$t-") >"$log" 2>&1 || rc=$?
  echo "$rc" >"$results/$t.rc"
}

for t in "${targets[@]}"; do
  while (($(jobs -rp | wc -l) >= parallel)); do wait -n || true; done
  fuzz_one "$t" &
done
wait

status=0
for t in "${targets[@]}"; do
  log="$results/$t.log"
  rc="$(cat "$results/$t.rc" 2>/dev/null || echo 1)"
  runs="$(grep -o 'Done [0-9]* runs' "$log" | grep -o '[0-9]*' | tail -1 || true)"
  files="$(find "$corpus_root/$t" -type f | wc -l)"
  crashes="$(find "$artifacts" -name "$t-*" -type f | wc -l)"
  printf '{"target":"%s","seconds":%s,"runs":%s,"corpus_files":%s,"crashes":%s,"exit":%s}\n' \
    "$t" "$secs" "${runs:-0}" "$files" "$crashes" "$rc"
  if ((rc != 0)) || [[ -z "$runs" ]]; then
    status=1
    echo "--- $t: libFuzzer output (last 40 lines)"
    tail -n 40 "$log"
  fi
done
exit $status
