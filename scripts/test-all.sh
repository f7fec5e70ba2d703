#!/usr/bin/env bash
# Every test Gatehop has, in the order that fails fastest. `npm test` runs this; so does CI.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/system-deps.sh
echo "== typecheck"; npx tsc -p tsconfig.json --noEmit
echo "== layering"; npx depcruise --config .dependency-cruiser.cjs core
echo "== lwip.wasm reproducible"
if [ "$(id -u)" -eq 0 ] || command -v clang >/dev/null 2>&1; then
  bash core/netstack/lwip/build.sh --check
else
  echo "skipped: needs root (to install clang/wasi-libc) or the toolchain present"
fi
echo "== build";    npm run build --silent
echo "== tests";    npx vitest run
