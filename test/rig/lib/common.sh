# Shared by up and down. A rig is named by a prefix (gr + 4 hex digits); every namespace, interface
# and file it makes carries it, so parallel rigs never collide and down can find everything.
set -euo pipefail
RIG_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rig_dir() { echo "/tmp/gatehop-rig-$1"; }
# The rig's /16 (10.K.0.0/16, K = 100..199) is derived from the prefix; a live rig reserves its K
# (rig_reserve_k) so two rigs never share one.
rig_k() { echo $((100 + 0x${1#gr} % 100)); }
RIG_K_DIR=/run/gatehop-rig-k
# Takes K for this prefix (mkdir is atomic); a reservation whose rig is gone is reclaimed.
rig_reserve_k() {
  local k r owner; k=$(rig_k "$1"); r="$RIG_K_DIR/$k"
  mkdir -p "$RIG_K_DIR"
  if mkdir "$r" 2>/dev/null; then echo "$1" > "$r/prefix"; return 0; fi
  owner=$(cat "$r/prefix" 2>/dev/null || true)
  [ "$owner" = "$1" ] && return 0
  if [ -n "$owner" ] && [ ! -d "$(rig_dir "$owner")" ] && ! ip netns list | grep -q "^$owner-"; then
    rm -rf "$r"
    if mkdir "$r" 2>/dev/null; then echo "$1" > "$r/prefix"; return 0; fi
  fi
  return 1
}
rig_release_k() { # only the owner's reservation
  local r; r="$RIG_K_DIR/$(rig_k "$1")"
  [ "$(cat "$r/prefix" 2>/dev/null || true)" = "$1" ] && rm -rf "$r"
  return 0
}
rig_owns_k() { [ "$(cat "$RIG_K_DIR/$(rig_k "$1")/prefix" 2>/dev/null || true)" = "$1" ]; }
nsx() { local ns=$1; shift; ip netns exec "$ns" "$@"; }
log() { echo "rig: $*" >&2; }
