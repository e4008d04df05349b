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
rm -rf "$artifacts" && mkdir -p "$artifacts"
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

status=0
"$root/target/pyenv/bin/python" "$root/tests/e2e/test_app.py" \
  --app "$root/target/debug/hsm-console" --data "$HSMC_DATA_DIR" --artifacts "$artifacts" || status=$?
if ((status != 0)); then
  echo "--- tauri-driver log"; tail -n 50 "$work/driver.log" || true
  for log in "$HSMC_DATA_DIR"/logs/hsm-console.1.log "$HSMC_DATA_DIR"/logs/hsm-console.log; do
    if [[ -f "$log" ]]; then
      echo "--- app log $(basename "$log") (warnings and errors)"
      grep -E " (WARN|ERROR) " "$log" | tail -n 40 || true
    fi
  done
fi
# Keep the app's and the driver's logs with the screenshots.
cp "$HSMC_DATA_DIR"/logs/*.log "$work/driver.log" "$artifacts/" 2>/dev/null || true
exit $status
