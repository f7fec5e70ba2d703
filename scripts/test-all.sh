#!/usr/bin/env bash
# Every test Gatehop has, in the order that fails fastest. `npm test` runs this; so does CI.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/system-deps.sh
echo "== typecheck"; npx tsc -p tsconfig.json --noEmit; npx tsc -p renderer/tsconfig.json
echo "== layering"; npx depcruise --config .dependency-cruiser.cjs core renderer electron
echo "== lwip.wasm reproducible"
if [ "$(id -u)" -eq 0 ] || command -v clang >/dev/null 2>&1; then
  bash core/netstack/lwip/build.sh --check
else
  echo "skipped: needs root (to install clang/wasi-libc) or the toolchain present"
fi
echo "== build";    npm run build --silent
# The switching load tests saturate the machine on purpose; beside other suites on two cores they
# measure CPU contention instead of switching. They run alone, after the rest (two workers).
SOLO="test/e2e/switching-rig.test.ts"
echo "== tests";    npx vitest run --exclude "$SOLO"
echo "== tests (alone: $SOLO)"; npx vitest run "$SOLO"
