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
  [openvpn]=openvpn
  [iptables]=iptables
  [gcc]=gcc
)

missing=()
for cmd in "${!NEED[@]}"; do
  command -v "$cmd" >/dev/null 2>&1 || missing+=("${NEED[$cmd]}")
done
[ -f /usr/include/libnetfilter_queue/libnetfilter_queue.h ] || missing+=(libnetfilter-queue-dev)
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "system-deps: missing packages: ${missing[*]} (run as root, or: sudo apt-get install -y ${missing[*]})" >&2
  exit 1
fi
echo "system-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
