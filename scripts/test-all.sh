#!/usr/bin/env bash
# Every test Gatehop has, in the order that fails fastest. `npm test` runs this; so does CI.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/system-deps.sh
echo "== typecheck"; npx tsc -p tsconfig.json --noEmit
echo "== layering"; npx depcruise --config .dependency-cruiser.cjs core
echo "== build";    npm run build --silent
echo "== tests";    npx vitest run
