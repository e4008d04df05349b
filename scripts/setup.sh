#!/usr/bin/env bash
# Installs and builds what the console and its tests need on a Debian 12 machine.
# Cheap to re-run: each step checks first and skips what is already in place.
#   scripts/setup.sh run    — what `make run` needs
#   scripts/setup.sh test   — everything (what `make test` needs)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
mode="${1:-test}"

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi

run_pkgs=(build-essential pkg-config libclang-dev libsqlite3-dev libssl-dev libwebkit2gtk-4.1-dev librsvg2-dev
  libfontconfig1-dev softhsm2 opensc python3 python3-venv fonts-noto-cjk)
test_pkgs=(xvfb xauth xdotool webkit2gtk-driver chromium-headless-shell fonts-dejavu-core imagemagick python3-gi gir1.2-gtk-3.0
  postgresql openssl sqlite3 gpg sq minisign gnutls-bin libengine-pkcs11-openssl apt-utils
  osslsigncode sbsigntool systemd-boot-efi)

pkgs=("${run_pkgs[@]}")
[[ "$mode" == test ]] && pkgs+=("${test_pkgs[@]}")

command -v cargo >/dev/null || { echo "setup: a stable Rust toolchain (rustup) is required"; exit 1; }
command -v node >/dev/null && node -e 'process.exit(+process.versions.node.split(".")[0] >= 20 ? 0 : 1)' \
  || { echo "setup: Node.js 20 or newer is required for the UI build"; exit 1; }

# Steps that need nothing from Debian's packages run in the background while apt works (apt
# mostly waits on the disk and the network): the OpenSSL tree, the UI packages and, for
# tests, the tools built from source. Each step's output is printed when it ends.
logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
declare -A bg_pid=() bg_t0=()
background() {
  local name="$1"; shift
  bg_t0[$name]=$SECONDS
  ("$@") >"$logs/$name.log" 2>&1 &
  bg_pid[$name]=$!
}
await() {
  local name="$1" rc=0
  wait "${bg_pid[$name]}" || rc=$?
  cat "$logs/$name.log"
  if ((rc != 0)); then
    echo "setup: $name failed (exit $rc)" >&2
    exit 1
  fi
  echo "setup: $name done ($((SECONDS - bg_t0[$name])) s after it started)"
}

# The OpenSSL 3.5 tree, only when Kryoptic or the `openssl` program needs building.
tree=0
if ! "$root/scripts/build-kryoptic.sh" --check || { [[ "$mode" == test ]] && ! "$root/scripts/build-openssl35.sh" --check; }; then
  # shellcheck source=scripts/openssl-tree.sh
  source "$root/scripts/openssl-tree.sh"
  background openssl-tree ensure_openssl_tree "$root" "${KRYOPTIC_JOBS:-$(nproc)}"
  tree=1
fi

ui_packages() {
  if [[ ! -f "$root/ui/node_modules/.package-lock.json" || "$root/ui/package-lock.json" -nt "$root/ui/node_modules/.package-lock.json" ]]; then
    echo "setup: installing UI packages"
    # `npm install` honours package-lock.json like `npm ci`, but tolerates vite's optional,
    # Windows-only dependency (napi-windows-process-start-time), which the registry this
    # machine can reach does not have and which `npm ci` therefore reports as missing.
    # npm rewrites package-lock.json even when nothing in it changes. The UI bundle is rebuilt
    # when the lock file is newer than it (scripts/build-ui.sh), and the app with it, so an
    # unchanged lock file keeps its time.
    local kept
    kept="$(mktemp)"
    cp -p "$root/ui/package-lock.json" "$kept"
    (cd "$root/ui" && npm install --no-audit --no-fund --loglevel=error)
    if cmp -s "$kept" "$root/ui/package-lock.json"; then touch -r "$kept" "$root/ui/package-lock.json"; fi
    rm -f "$kept"
  else
    echo "setup: UI packages present"
  fi
}
background ui-packages ui_packages

# Tools built from source, for the tests only. Debug builds (`--debug`): each runs for seconds
# per test run, and a release build of the four took about ten minutes of a cold set-up
# (mdbook's and tauri-driver's release profiles optimise the whole tree). They share one
# target directory, so a dependency two of them lock at the same version compiles once.
# mdbook without its `serve` and `watch` features: the lint stage only builds the book.
install_tools() {
  export CARGO_TARGET_DIR="$root/target/tools/build"
  local tool
  for tool in "mdbook@=0.5.4 --no-default-features --features search" "tauri-driver@^2" "cargo-fuzz@=0.13.2"; do
    local name="${tool%%@*}"
    if [[ -x "$root/target/tools/bin/$name" ]]; then
      echo "setup: $name present"
      continue
    fi
    echo "setup: installing $name"
    # shellcheck disable=SC2086 # the tool's name and its feature flags
    cargo install --locked --debug --quiet --root "$root/target/tools" $tool
  done
  if ! cargo nextest --version >/dev/null 2>&1; then
    echo "setup: installing cargo-nextest"
    cargo install cargo-nextest --locked
  fi
}
[[ "$mode" == test ]] && background tools install_tools

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
t0=$SECONDS
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
  echo "setup: system packages installed ($((SECONDS - t0)) s)"
else
  echo "setup: system packages present"
fi

((tree)) && await openssl-tree
[[ "$mode" == test ]] && background python "$root/scripts/setup-python.sh"
t0=$SECONDS
"$root/scripts/build-kryoptic.sh"
[[ "$mode" == test ]] && "$root/scripts/build-openssl35.sh"
echo "setup: Kryoptic and OpenSSL 3.5 ready ($((SECONDS - t0)) s)"
await ui-packages
if [[ "$mode" == test ]]; then
  await python
  await tools
fi
echo "setup: done ($mode, $SECONDS s)"
