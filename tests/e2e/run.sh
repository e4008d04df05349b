#!/usr/bin/env bash
# End-to-end on the real app: the production UI bundle embedded in a debug build of the Tauri app,
# driven through tauri-driver + Debian's WebKitWebDriver under Xvfb. Screenshots go to
# tests/artifacts/e2e/.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-2}"

# The build the other stages share (scripts/build.sh): the app with custom-protocol (it
# serves the embedded ui/dist instead of the dev server) and liblunasim.so beside it.
scripts/build.sh --quiet

driver="$root/target/tools/bin/tauri-driver"
[[ -x "$driver" ]] || { echo "tauri-driver missing: run scripts/setup.sh test"; exit 1; }
artifacts="$root/tests/artifacts/e2e"
work="$(mktemp -d)"
cleanup() {
  [[ -n "${driver_pid:-}" ]] && kill "$driver_pid" 2>/dev/null || true
  [[ -n "${xvfb_pid:-}" ]] && kill "$xvfb_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

display=":$((90 + RANDOM % 100))"
Xvfb "$display" -screen 0 1920x1080x24 -nolisten tcp >"$work/xvfb.log" 2>&1 &
xvfb_pid=$!
export DISPLAY="$display"
for _ in $(seq 50); do xdpyinfo >/dev/null 2>&1 && break; [[ -S /tmp/.X11-unix/X${display#:} ]] && break; sleep 0.1; done

export HSMC_DATA_DIR="$work/data"
# WebKit keeps the page's local storage (remembered view, partition) under XDG_DATA_HOME:
# a fresh one per run, so nothing from earlier runs on this machine leaks in.
export XDG_DATA_HOME="$work/xdg-data" XDG_CACHE_HOME="$work/xdg-cache" XDG_CONFIG_HOME="$work/xdg-config"
unset LUNASIM_CONF
"$driver" --native-driver /usr/bin/WebKitWebDriver >"$work/driver.log" 2>&1 &
driver_pid=$!
# Both tauri-driver (4444) and its WebKitWebDriver child (4445) must listen.
for _ in $(seq 100); do
  (exec 3<>/dev/tcp/127.0.0.1/4444) 2>/dev/null && (exec 3<>/dev/tcp/127.0.0.1/4445) 2>/dev/null && break
  sleep 0.1
done

# The kernel's crash reports (segfaults, general protection faults) from this run: a window
# that vanishes leaves WebDriver only "invalid session id"; the kernel says which process,
# thread and library died. Empty when the kernel log cannot be read (dmesg restricted).
uptime_now() { local up _; read -r up _ </proc/uptime; echo "$up"; }
crashes_since() {
  dmesg 2>/dev/null | awk -v t0="$1" -F'[][]' '$2 + 0 >= t0 && /segfault|general protection|traps:|invalid opcode/' || true
}
# A crash in the software GL driver (Mesa's swrast/llvmpipe, which WebKit's compositor
# thread uses under Xvfb) takes the window with it. It is not the console's code: Mesa 22.3's
# llvmpipe faulted once in CI (`ThreadedCompositor ... general protection fault ... in
# swrast_dri.so`) with the console mid-wait. Only then, and only when every crash the kernel
# logged was in that driver, the e2e runs once more, saying so; any other failure stands.
gl_driver='swrast_dri\.so|kms_swrast|libgallium|libLLVM|llvmpipe'

app="$root/target/debug/hsm-console"
run_e2e() {
  # A fresh start: the steps build on what the earlier ones left (data, the HA group's tokens).
  rm -rf "$artifacts" "$HSMC_DATA_DIR" "$work/ha" "$XDG_DATA_HOME" "$XDG_CACHE_HOME" "$XDG_CONFIG_HOME"
  mkdir -p "$artifacts"
  "$root/target/pyenv/bin/python" "$root/tests/e2e/test_app.py" \
    --app "$app" --data "$HSMC_DATA_DIR" --artifacts "$artifacts"
}
# The app's and the driver's logs, kept with an attempt's screenshots in $1.
keep_logs() { cp "$HSMC_DATA_DIR"/logs/*.log "$work/driver.log" "$1/" 2>/dev/null || true; }

report() {
  echo "=== e2e failure report"
  echo "--- tauri-driver log (the app's stderr; GTK's dconf warnings left out)"
  grep -v "dconf-WARNING" "$work/driver.log" | tail -n 30 || true
  for log in "$HSMC_DATA_DIR"/logs/hsm-console.1.log "$HSMC_DATA_DIR"/logs/hsm-console.log; do
    if [[ -f "$log" ]]; then
      echo "--- app log $(basename "$log") (warnings and errors)"
      grep -E " (WARN|ERROR) " "$log" | tail -n 30 || true
    fi
  done
  echo "--- crashes the kernel logged during the run"
  if [[ -n "$1" ]]; then echo "$1"; else echo "(none, or the kernel log is not readable)"; fi
}

status=0
t0="$(uptime_now)"
run_e2e || status=$?
if ((status != 0)); then
  crashes="$(crashes_since "$t0")"
  report "$crashes"
  if [[ -n "$crashes" ]] && ! grep -Evq "$gl_driver" <<<"$crashes"; then
    echo "e2e: the window died in the software GL driver (above), outside the console's code:"
    echo "e2e: running the e2e once more; the first attempt's screenshots are in tests/artifacts/e2e-gl-crash/"
    rm -rf "$artifacts-gl-crash" && mv "$artifacts" "$artifacts-gl-crash"
    keep_logs "$artifacts-gl-crash"
    # An app whose web process died may outlive its WebDriver session: it must not keep
    # writing to the data folder the second attempt starts afresh.
    pkill -KILL -f "^$app( |\$)" 2>/dev/null || true
    status=0
    t0="$(uptime_now)"
    run_e2e || status=$?
    if ((status == 0)); then
      echo "note: the e2e passed at its second attempt; in the first the window died in the GL driver (tests/artifacts/e2e-gl-crash/)"
    else
      report "$(crashes_since "$t0")"
    fi
  fi
fi
keep_logs "$artifacts"
exit $status
