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
test_pkgs=(xvfb xauth xdotool webkit2gtk-driver chromium fonts-dejavu-core imagemagick python3-gi gir1.2-gtk-3.0
  postgresql openssl sqlite3 gpg sq minisign gnutls-bin libengine-pkcs11-openssl apt-utils
  osslsigncode sbsigntool systemd-boot-efi)

pkgs=("${run_pkgs[@]}")
[[ "$mode" == test ]] && pkgs+=("${test_pkgs[@]}")

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "setup: system packages present"
fi

command -v cargo >/dev/null || { echo "setup: a stable Rust toolchain (rustup) is required"; exit 1; }
command -v node >/dev/null && node -e 'process.exit(+process.versions.node.split(".")[0] >= 20 ? 0 : 1)' \
  || { echo "setup: Node.js 20 or newer is required for the UI build"; exit 1; }

"$root/scripts/build-kryoptic.sh"

if [[ ! -f "$root/ui/node_modules/.package-lock.json" || "$root/ui/package-lock.json" -nt "$root/ui/node_modules/.package-lock.json" ]]; then
  echo "setup: installing UI packages"
  # `npm install` honours package-lock.json like `npm ci`, but tolerates vite's optional,
  # Windows-only dependency (napi-windows-process-start-time), which the registry this
  # machine can reach does not have and which `npm ci` therefore reports as missing.
  (cd "$root/ui" && npm install --no-audit --no-fund --loglevel=error)
else
  echo "setup: UI packages present"
fi

if [[ "$mode" == test ]]; then
  "$root/scripts/build-openssl35.sh"
  "$root/scripts/setup-python.sh"
  if ! cargo nextest --version >/dev/null 2>&1; then
    echo "setup: installing cargo-nextest"
    cargo install cargo-nextest --locked
  fi
  if [[ ! -x "$root/target/tools/bin/cargo-deny" ]]; then
    echo "setup: installing cargo-deny (the offline advisory check)"
    cargo install cargo-deny --locked --version "=0.20.2" --root "$root/target/tools" --quiet
  fi
  if [[ ! -x "$root/target/tools/bin/mdbook" ]]; then
    echo "setup: installing mdbook (the book in docs/, built by the lint stage)"
    cargo install mdbook --locked --version "=0.5.4" --root "$root/target/tools" --quiet
  fi
  if [[ ! -x "$root/target/tools/bin/tauri-driver" ]]; then
    echo "setup: installing tauri-driver"
    cargo install tauri-driver --locked --version "^2" --root "$root/target/tools" --quiet
  fi
fi
echo "setup: done ($mode)"
