#!/usr/bin/env bash
# Builds core/netstack/lwip/lwip.wasm from Debian's lwip source package with Debian's clang.
#   build.sh            build into lwip.wasm (the committed file)
#   build.sh --check    build into a temp file and fail if it differs from the committed one
# Needs: clang lld wasi-libc libclang-rt-dev-wasm32 dpkg-dev (installed when run as root).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
cache="$root/build/lwip-src"
LWIP_VERSION=2.1.3+dfsg1

need=()
for pkg in clang lld wasi-libc libclang-rt-dev-wasm32 dpkg-dev; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then echo "netstack build: missing packages: ${need[*]}" >&2; exit 1; fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

src="$cache/lwip-$LWIP_VERSION"
if [ ! -f "$src/src/core/tcp.c" ]; then
  mkdir -p "$cache"
  # Debian's source package (with its patches, e.g. the CVE-2020-8597 fix) through a temporary
  # deb-src entry, removed again whatever happens.
  list=/etc/apt/sources.list.d/gatehop-lwip-src.sources
  if ! grep -rqs '^Types:.*deb-src' /etc/apt/sources.list.d/ && ! grep -qs '^deb-src' /etc/apt/sources.list; then
    [ "$(id -u)" -eq 0 ] || { echo "netstack build: need root to add a deb-src entry for 'apt-get source lwip'" >&2; exit 1; }
    trap 'rm -f "$list"; apt-get update -qq >/dev/null 2>&1 || true' EXIT
    sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources > "$list"
    apt-get update -qq
  fi
  (cd "$cache" && apt-get source -qq "lwip=2.1.3+dfsg1-2" >/dev/null 2>&1 || apt-get source -qq lwip >/dev/null)
fi

# lwIP counts DHCP lease times in ticks of a 60 s timer (DHCP_COARSE_TIMER_SECS, fixed in dhcp.h):
# a hub whose lease is under ~2 minutes would see us renew late or drop the address at the first
# tick. A copy of dhcp.h with a 5 s tick, found before lwIP's own, renews at half the lease for
# any lease from 10 s up (the tick costs nothing: the stack calls lwIP's timers every 100 ms).
override="$cache/override"
mkdir -p "$override/lwip"
# (lwIP's files end their lines with CR LF.)
sed 's/^#define DHCP_COARSE_TIMER_SECS  60\r\?$/#define DHCP_COARSE_TIMER_SECS  5/' "$src/src/include/lwip/dhcp.h" > "$override/lwip/dhcp.h"
grep -q '^#define DHCP_COARSE_TIMER_SECS  5$' "$override/lwip/dhcp.h" || { echo "netstack build: dhcp.h has no DHCP_COARSE_TIMER_SECS 60 to change" >&2; exit 1; }

out="$here/lwip.wasm"
[ "${1:-}" = "--check" ] && out=$(mktemp --suffix=.wasm)

core="init def inet_chksum ip mem memp netif pbuf raw stats tcp tcp_in tcp_out timeouts udp"
ipv4="ip4 ip4_addr icmp ip4_frag etharp dhcp"
files=()
for f in $core; do files+=("$src/src/core/$f.c"); done
for f in $ipv4; do files+=("$src/src/core/ipv4/$f.c"); done
files+=("$src/src/netif/ethernet.c")

clang --target=wasm32-wasi --sysroot=/usr -O2 -flto \
  -mbulk-memory -msign-ext -mnontrapping-fptoint -mexec-model=reactor \
  -ffile-prefix-map="$src"=lwip -ffile-prefix-map="$here"=glue -ffile-prefix-map="$root"=. \
  -fno-ident -Wall -Wno-unused-function -Wno-tautological-constant-out-of-range-compare \
  -I"$here" -I"$override" -I"$src/src/include" \
  -fuse-ld=lld -Wl,--strip-all -Wl,--gc-sections \
  -Wl,-z,stack-size=262144 -Wl,--initial-memory=33554432 -Wl,--max-memory=2147483648 \
  -o "$out" "$here/glue.c" "${files[@]}"

if [ "${1:-}" = "--check" ]; then
  if cmp -s "$out" "$here/lwip.wasm"; then
    echo "netstack: lwip.wasm is reproducible ($(stat -c %s "$out") bytes, sha256 $(sha256sum "$out" | cut -c1-16))"
    rm -f "$out"
  else
    echo "netstack: rebuilt lwip.wasm differs from the committed file (sha256 $(sha256sum "$out" | cut -c1-16) vs $(sha256sum "$here/lwip.wasm" | cut -c1-16))" >&2
    rm -f "$out"
    exit 1
  fi
else
  echo "netstack: built $out ($(stat -c %s "$out") bytes, sha256 $(sha256sum "$out" | cut -c1-16))"
fi
