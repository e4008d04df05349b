#!/usr/bin/env bash
# Cold start to an interactive window, and resident memory, of the desktop app under Xvfb.
#   scripts/measure-startup.sh [BINARY]   (default target/release/hsm-console)
# Prints one JSON line. "Interactive" = the UI has mounted and sent its first request.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${1:-$root/target/release/hsm-console}"
work="$(mktemp -d)"
display=":$((200 + RANDOM % 100))"
Xvfb "$display" -screen 0 1440x900x24 -nolisten tcp >/dev/null 2>&1 &
xvfb=$!
trap 'kill $xvfb 2>/dev/null; [[ -n "${app:-}" ]] && kill $app 2>/dev/null; rm -rf "$work"' EXIT
sleep 0.5
runs=()
for i in 1 2 3; do
  sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null || true
  start=$(date +%s%N)
  DISPLAY="$display" HSMC_DATA_DIR="$work/data" HSMC_LOG=info "$bin" >"$work/log" 2>&1 &
  app=$!
  until grep -q "window ready" "$work/log" 2>/dev/null; do
    kill -0 $app 2>/dev/null || { echo "the app exited"; cat "$work/log"; exit 1; }
    sleep 0.01
  done
  runs+=($(( ($(date +%s%N) - start) / 1000000 )))
  sleep 3
  # The app and its WebKit helper processes.
  rss=0; anon=0
  for p in $app $(pgrep -P $app || true); do
    kb=$(awk '/^VmRSS/ {print $2}' /proc/$p/status 2>/dev/null || echo 0)
    an=$(awk '/^RssAnon/ {print $2}' /proc/$p/status 2>/dev/null || echo 0)
    rss=$((rss + kb)); anon=$((anon + an))
  done
  kill $app; wait $app 2>/dev/null || true
  app=""
done
# RSS counts shared library pages once per process; RssAnon is each process's own memory.
printf '{"bench":"startup","binary":"%s","runs_ms":[%s],"first_run_ms":%s,"rss_mib_after_3s":%s,"private_mib_after_3s":%s,"processes":"app + WebKit network + web"}\n' \
  "$(basename "$bin")" "$(IFS=,; echo "${runs[*]}")" "${runs[0]}" "$((rss / 1024))" "$((anon / 1024))"
