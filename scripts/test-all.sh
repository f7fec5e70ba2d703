#!/usr/bin/env bash
# Every test Gatehop has, in the order that fails fastest. `npm test` runs this; so does CI.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/system-deps.sh
echo "== typecheck"; npx tsc -p tsconfig.json --noEmit; npx tsc -p renderer/tsconfig.json
echo "== lint";      npx eslint --max-warnings 0 core electron renderer/src
echo "== format";    npm run --silent format:check
echo "== layering"; npx depcruise --config .dependency-cruiser.cjs core renderer electron
echo "== lwip.wasm reproducible"
if [ "$(id -u)" -eq 0 ] || command -v clang >/dev/null 2>&1; then
  bash core/netstack/lwip/build.sh --check
else
  echo "skipped: needs root (to install clang/wasi-libc) or the toolchain present"
fi
echo "== build";    npm run build --silent
# The switching load tests saturate the machine on purpose, and the browser suite runs Chromium
# against a rig, and the soak runs for ten minutes; beside other suites on two cores they would
# measure CPU contention instead of what they test. The SE-VPN suite moves this machine's way out
# for a moment (a second default route: another network, #58), which every core running beside it
# would take for a change of network too. They run after the rest, one file at a time.
SOLO=("test/e2e/switching-rig.test.ts" "test/e2e/balance-rig.test.ts" "test/browser/ui-rig.test.ts" "test/e2e/soak-rig.test.ts" "test/e2e/softether-rig.test.ts")
echo "== tests";    npx vitest run "${SOLO[@]/#/--exclude=}"
for f in "${SOLO[@]}"; do echo "== tests (alone: $f)"; npx vitest run "$f"; done
# The tunnels' data path again on its JavaScript fallback (what runs where gatehop-native is not
# built or finds no libcrypto): the same OpenVPN suites, the rig's real servers included.
JS_PATH=("test/unit/ovpn-wire.test.ts" "test/unit/ovpn-data-engines.test.ts" "test/integration/ovpn-softether-stable.test.ts" "test/e2e/ovpn-rig.test.ts" "test/e2e/tunnel-egress-rig.test.ts")
# Not the two-minute idle keepalive test (idle, the data path only seals a ping now and then), nor
# the tests of the control channel alone (TLS versions, certificates, exit notices, renegotiation
# caps, reconnects), which no data engine touches.
NOT_DATA='keepalive holds idle tunnels|refuses ours in silence|checks the server certificate|tells a stock OpenVPN server|renegotiates more often than allowed|a reconnect that brings a new address|TLS handshake that goes unanswered|acknowledges our ClientHello'
echo "== tests (JavaScript data path, GATEHOP_NATIVE=off)"; GATEHOP_NATIVE=off npx vitest run "${JS_PATH[@]}" -t "^(?!.*(${NOT_DATA}))"
