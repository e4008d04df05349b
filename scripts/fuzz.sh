#!/usr/bin/env bash
# Fuzz every parser the console owns (fuzz/fuzz_targets) for a bounded time each with
# cargo-fuzz + libFuzzer. Prints one JSON line per target and exits non-zero on a crash,
# a leak of the time budget (hang) or a target that does not build.
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]      (default 20 s, every target)
# A target's time is the CPU time its fuzzer process spends, not the time on the clock: on
# an otherwise idle core the two are the same, and when the machine is shared (scripts/test.sh
# runs this stage at the lowest priority beside the other stages) each target still gets its
# whole share of fuzzing. At the end of its CPU time a fuzzer is asked to stop (SIGUSR1,
# libFuzzer's graceful exit) and prints its statistics.
# Corpora: the committed seeds (fuzz/seeds/TARGET, read-only) plus everything earlier runs
# found, kept in $HSMC_FUZZ_CORPUS (default ~/.cache/hsm-console-fuzz/TARGET) so each run
# starts where the last stopped. Crash inputs go to tests/artifacts/fuzz/.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
secs="${1:-${HSMC_FUZZ_SECONDS:-20}}"
# libFuzzer's limit for one input, on the clock: past it, the input is reported as a hang.
unit_timeout="${HSMC_FUZZ_UNIT_TIMEOUT:-10}"
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

# The CPU time of process $1 so far, in clock ticks, into `used`: utime + stime, fields 14
# and 15 of /proc/PID/stat (the program's name, field 2, has no spaces). Read without a
# subshell: it runs five times a second per target.
cpu_ticks() {
  local f
  read -r -a f <"/proc/$1/stat" 2>/dev/null && used=$((f[13] + f[14]))
}
hz="$(getconf CLK_TCK)"

fuzz_one() {
  local t="$1" corpus="$corpus_root/$1" log="$results/$1.log" rc=0 pid used=0
  mkdir -p "$corpus"
  # libFuzzer's own limit is on the clock, far beyond the CPU budget: it only ends a run
  # that the machine starved of CPU for that long.
  (cd fuzz && exec "$bin/$t" "$corpus" "seeds/$t" \
    -max_total_time="$((secs * 30))" -timeout="$unit_timeout" -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$artifacts/$t-") >"$log" 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    cpu_ticks "$pid"
    if ((used >= secs * hz)); then
      kill -USR1 "$pid" 2>/dev/null || true
      break
    fi
    sleep 0.2
  done
  wait "$pid" || rc=$?
  echo "$rc" >"$results/$t.rc"
  echo "$used" >"$results/$t.cpu"
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
  runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
  cpu="$(awk -v t="$(cat "$results/$t.cpu" 2>/dev/null || echo 0)" -v hz="$hz" 'BEGIN { printf "%.1f", t / hz }')"
  files="$(find "$corpus_root/$t" -type f | wc -l)"
  crashes="$(find "$artifacts" -name "$t-*" -type f | wc -l)"
  printf '{"target":"%s","cpu_seconds":%s,"runs":%s,"corpus_files":%s,"crashes":%s,"exit":%s}\n' \
    "$t" "$cpu" "${runs:-0}" "$files" "$crashes" "$rc"
  if ((rc != 0)) || [[ -z "$runs" ]]; then
    status=1
    echo "--- $t: libFuzzer output (last 40 lines)"
    tail -n 40 "$log"
  fi
done
exit $status
