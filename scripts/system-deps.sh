#!/usr/bin/env bash
# Installs the Debian packages the test suite drives (real clients, real servers for the rig in
# test/rig). Idempotent: only what is missing is installed. Needs root for apt-get; without root it names what is missing.
set -euo pipefail

# command → package
declare -A NEED=(
  [curl]=curl
  [openssl]=openssl
  [microsocks]=microsocks
  [ip]=iproute2
  [python3]=python3
  [dnsmasq]=dnsmasq-base
  [vpnserver]=softether-vpnserver
  # SoftEther's own client: the peer bench:tunnel measures Gatehop's SE-VPN against (test/rig/softether-client.ts).
  [vpnclient]=softether-vpnclient
  [openvpn]=openvpn
  [iptables]=iptables
  [gcc]=gcc
  # core/sysproxy's real-desktop tests: GNOME's settings (dconf in a private D-Bus session) and KDE's.
  [dbus-run-session]=dbus-daemon
  [dbus-send]=dbus-bin
  [gsettings]=libglib2.0-bin
  [kwriteconfig5]=libkf5config-bin
  [kreadconfig5]=libkf5config-bin
  # A user's "other proxy" (config upstream): SOCKS5 with a UDP relay (Dante) and HTTP CONNECT (tinyproxy); microsocks above is SOCKS5 without UDP.
  # The rig's filters (Rig.blockFromHost): nftables drops, as a blocking network does.
  [nft]=nftables
  [danted]=dante-server
  # A client that reads at a set pace (curl into pv -L): the Clash byte counters' test.
  [pv]=pv
  [tinyproxy]=tinyproxy
  # mihomo's binary rule sets (format: mrs) are zstd streams: the tests write their fixtures with zstd's own CLI.
  [zstd]=zstd
  # The renderer's browser tests drive Debian's Chromium through playwright-core.
  [chromium]=chromium
  # `gatehop service install`'s units are read by systemd's own checker (test/integration/service-unit.test.ts).
  [systemd-analyze]=systemd
  # A shared device's QR code is read back by a real decoder (test/integration/share-lan.test.ts).
  [zbarimg]=zbar-tools
  # The server .deb is installed with apt-get into a clean Debian root (test/integration/server-deb.test.ts).
  [debootstrap]=debootstrap
)

missing=()
for cmd in "${!NEED[@]}"; do
  command -v "$cmd" >/dev/null 2>&1 || missing+=("${NEED[$cmd]}")
done
[ -f /usr/include/libnetfilter_queue/libnetfilter_queue.h ] || missing+=(libnetfilter-queue-dev)
[ -f /usr/share/glib-2.0/schemas/org.gnome.system.proxy.gschema.xml ] || missing+=(gsettings-desktop-schemas)
[ -f /usr/libexec/dconf-service ] || missing+=(dconf-service)
# Chinese glyphs for the zh-CN screenshots (without them Chromium draws boxes).
ls /usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc >/dev/null 2>&1 || missing+=(fonts-noto-cjk)
ls /usr/share/fonts/truetype/noto/NotoColorEmoji.ttf >/dev/null 2>&1 || missing+=(fonts-noto-color-emoji)
ls /usr/lib/*/gio/modules/libdconfsettings.so >/dev/null 2>&1 || missing+=(dconf-gsettings-backend)
# one package may stand for several commands
mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u | sed '/^$/d')
# The packaging test asks apt-cache whether each Depends of the .deb can be installed: it needs package lists.
if [ "$(id -u)" -eq 0 ] && ! ls /var/lib/apt/lists/*_Packages* >/dev/null 2>&1; then
  echo "system-deps: apt-get update (no package lists yet)"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
fi
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "system-deps: missing packages: ${missing[*]} (run as root, or: sudo apt-get install -y ${missing[*]})" >&2
    exit 1
  fi
  echo "system-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# A clean Debian 12 root's packages, fetched here (setup) so that the server package's install
# test (test/integration/server-deb.test.ts) reaches no host itself: it unpacks these.
BASE=/var/cache/gatehop-test/debian-bookworm-minbase.tgz
if [ "$(id -u)" -eq 0 ] && [ ! -s "$BASE" ]; then
  echo "system-deps: fetching a minimal Debian 12 for the package test"
  mkdir -p "$(dirname "$BASE")"
  scratch=$(mktemp -d)
  debootstrap --variant=minbase --include=ca-certificates --make-tarball="$BASE.part" bookworm "$scratch/root" \
    http://deb.debian.org/debian >/dev/null
  mv "$BASE.part" "$BASE"
  rm -rf "$scratch"
fi
