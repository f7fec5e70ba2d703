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
# A process as the rig records it (DIR/pids/NAME): "PID STARTTIME", the start time in clock ticks
# (/proc/PID/stat field 22), so a later kill reaches that process and never one that was given the
# same PID since: pid_max is 32768 here and a CI run starts tens of thousands of processes.
proc_identity() {
  local stat rest
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || { echo "$1 gone"; return 0; }
  rest=${stat##*) }
  local -a f
  read -r -a f <<< "$rest"
  echo "$1 ${f[19]}"
}
# Kills a recorded process's group and the process itself, only while it is the one recorded.
kill_recorded() {
  local pid start
  read -r pid start < "$1" 2>/dev/null || return 0
  [ -n "${start:-}" ] && [ "$start" != gone ] || return 0
  [ "$(proc_identity "$pid")" = "$pid $start" ] || return 0
  kill -9 -- "-$pid" 2>/dev/null
  kill -9 "$pid" 2>/dev/null
  return 0
}
