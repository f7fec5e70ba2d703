#!/usr/bin/env bash
# Builds core/netstack/lwip/lwip.wasm (the tunnels' client stack) and lwip-gateway.wasm (the capture
# gateway's, below) from Debian's lwip source package with Debian's clang.
#   build.sh            build both (the committed files)
#   build.sh --check    build into temp files and fail if either differs from the committed one
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

# The capture gateway's build (lwip-gateway.wasm, core/capture): every destination is "us", so a
# program's TCP connection to any address and port is accepted and handed to the host with that
# address and port as its local end. Two of lwIP's own lines change, in copies, under
# GATEHOP_GATEWAY (the client build compiles lwIP as shipped): ip4_input_accept() takes every
# packet on an up interface, and the one listening pcb takes a SYN to any port, the new pcb keeping
# the port the SYN was sent to. Each replacement must match exactly once, or the build stops.
gwsrc="$cache/gateway"
mkdir -p "$gwsrc"
patch_once() { # file old new
  python3 - "$@" <<'PY'
import sys
path, old, new, out = sys.argv[1:5]
text = open(path, newline='').read()
if text.count(old) != 1:
    sys.exit(f"netstack build: {path}: expected one '{old}'")
open(out, 'w', newline='').write(text.replace(old, new))
PY
}
patch_once "$src/src/core/ipv4/ip4.c" \
  '  /* interface is up and configured? */' \
  '  if (GATEHOP_GATEWAY && netif_is_up(netif)) return 1;
  /* interface is up and configured? */' "$gwsrc/ip4.c"
patch_once "$src/src/core/tcp_in.c" \
  '      if (lpcb->local_port == tcphdr->dest) {' \
  '      if (GATEHOP_GATEWAY || lpcb->local_port == tcphdr->dest) {' "$gwsrc/tcp_in.step.c"
patch_once "$gwsrc/tcp_in.step.c" \
  '    npcb->local_port = pcb->local_port;' \
  '    npcb->local_port = GATEHOP_GATEWAY ? tcphdr->dest : pcb->local_port;' "$gwsrc/tcp_in.c"
rm -f "$gwsrc/tcp_in.step.c"

check=0
[ "${1:-}" = "--check" ] && check=1

core="init def inet_chksum ip mem memp netif pbuf raw stats tcp tcp_in tcp_out timeouts udp"
ipv4="ip4 ip4_addr icmp ip4_frag etharp dhcp"

# build <committed file> <GATEHOP_GATEWAY>
build() {
  local committed="$here/$1" gateway=$2 out files=()
  out=$committed
  [ $check -eq 1 ] && out=$(mktemp --suffix=.wasm)
  for f in $core; do
    if [ "$gateway" = 1 ] && [ "$f" = tcp_in ]; then files+=("$gwsrc/tcp_in.c"); else files+=("$src/src/core/$f.c"); fi
  done
  for f in $ipv4; do
    if [ "$gateway" = 1 ] && [ "$f" = ip4 ]; then files+=("$gwsrc/ip4.c"); else files+=("$src/src/core/ipv4/$f.c"); fi
  done
  files+=("$src/src/netif/ethernet.c")

  clang --target=wasm32-wasi --sysroot=/usr -O2 -flto \
    -mbulk-memory -msign-ext -mnontrapping-fptoint -mexec-model=reactor \
    -DGATEHOP_GATEWAY="$gateway" \
    -ffile-prefix-map="$src"=lwip -ffile-prefix-map="$gwsrc"=lwip-gateway -ffile-prefix-map="$here"=glue -ffile-prefix-map="$root"=. \
    -fno-ident -Wall -Wno-unused-function -Wno-tautological-constant-out-of-range-compare \
    -I"$here" -I"$override" -I"$src/src/include" \
    -fuse-ld=lld -Wl,--strip-all -Wl,--gc-sections \
    -Wl,-z,stack-size=262144 -Wl,--initial-memory=33554432 -Wl,--max-memory=2147483648 \
    -o "$out" "$here/glue.c" "${files[@]}"

  if [ $check -eq 1 ]; then
    if cmp -s "$out" "$committed"; then
      echo "netstack: $1 is reproducible ($(stat -c %s "$out") bytes, sha256 $(sha256sum "$out" | cut -c1-16))"
      rm -f "$out"
    else
      echo "netstack: rebuilt $1 differs from the committed file (sha256 $(sha256sum "$out" | cut -c1-16) vs $(sha256sum "$committed" | cut -c1-16))" >&2
      rm -f "$out"
      exit 1
    fi
  else
    echo "netstack: built $out ($(stat -c %s "$out") bytes, sha256 $(sha256sum "$out" | cut -c1-16))"
  fi
}

build lwip.wasm 0
build lwip-gateway.wasm 1
