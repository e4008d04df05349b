#!/usr/bin/env bash
# The UI bundle (ui/dist), built only when something it is made from is newer than it. The
# app embeds ui/dist when it compiles, so rewriting identical files would make cargo rebuild
# the app in every stage that shares the build.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root/ui"
stamp=dist/index.html
if [[ -f "$stamp" && -z "$(find src public index.html vite.config.ts tsconfig.json package-lock.json ../locales \
  -type f -newer "$stamp" -print -quit 2>/dev/null)" ]]; then
  exit 0
fi
npm run --silent build
