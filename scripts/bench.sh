#!/usr/bin/env bash
# Runs the benchmarks; each prints JSON lines comparing against a baseline measured in the
# same run. Results are appended to target/bench/results.jsonl.
#   scripts/bench.sh                  all
#   scripts/bench.sh pool list audit  some
#   scripts/bench.sh hss              HSS signing per tree size and key generation (minutes:
#                                     it generates an H20/H10 key)
#   scripts/bench.sh tsa              CMS + RFC 3161 timestamp per file against the local TSA
#   scripts/bench.sh dual             dual signing (Ed25519 + ML-DSA-65) vs two single-key runs
#   scripts/bench.sh pqc              PQC readiness of a 10,000-object partition vs listing it
#   scripts/bench.sh slh-dsa          SLH-DSA sign/verify latency per parameter set (Kryoptic),
#                                     beside ML-DSA-65 signing
#   scripts/bench.sh audit-app        verifying a 1,000,000-record trail as the app does
#                                     (SQLite and PostgreSQL, progress events included)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-2}"
mkdir -p target/bench
out="target/bench/results.jsonl"
which=("$@")
((${#which[@]})) || which=(pool list hashing probe signing dual audit startup)
for b in "${which[@]}"; do
  case "$b" in
    pool) cargo bench -q -p hsmc-hsm --bench pool_overhead | tee -a "$out" ;;
    list) cargo bench -q -p hsmc-hsm --bench list_objects | tee -a "$out" ;;
    hashing) cargo bench -q -p hsmc-signing --bench hashing | tee -a "$out" ;;
    # HSS_BENCH_MODULE=PATH measures another lunasim build (before/after); see the bench.
    hss) cargo build -q --release -p hsmc-lunasim && cargo bench -q -p hsmc-lunasim --bench hss | tee -a "$out" ;;
    probe) cargo bench -q -p hsmc-bench --bench overhead | tee -a "$out" ;;
    pqc) cargo bench -q -p hsmc-console --bench pqc_classify | tee -a "$out" ;;
    slh-dsa) cargo bench -q -p hsmc-bench --bench slh_dsa | tee -a "$out" ;;
    tsa) cargo bench -q -p hsmc-console --bench timestamp | tee -a "$out" ;;
    signing) cargo bench -q -p hsmc-console --bench signing | tee -a "$out" ;;
    dual) cargo build -q --release -p hsmc-lunasim && cargo bench -q -p hsmc-console --bench dual | tee -a "$out" ;;
    startup)
      cargo build --release --quiet --bin hsm-console --features custom-protocol
      scripts/measure-startup.sh | tee -a "$out" ;;
    audit-app) cargo bench -q -p hsmc-console --bench audit_verify | tee -a "$out" ;;
    audit) AUDIT_BENCH_RECORDS="${AUDIT_BENCH_RECORDS:-200000}" cargo bench -q -p hsmc-audit --bench throughput | tee -a "$out" ;;
    *) echo "unknown benchmark $b (pool, list, hashing, hss, probe, pqc, slh-dsa, signing, dual, tsa, audit, audit-app, startup)"; exit 2 ;;
  esac
done
echo "bench: results appended to $out"
