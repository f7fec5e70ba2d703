# Shared by up and down. A rig is named by a prefix (gr + 4 hex digits); every namespace, interface
# and file it makes carries it, so parallel rigs never collide and down can find everything.
set -euo pipefail
RIG_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rig_dir() { echo "/tmp/gatehop-rig-$1"; }
# The rig's /16 (10.K.0.0/16, K = 100..199) is derived from the prefix so two rigs rarely overlap.
rig_k() { echo $((100 + 0x${1#gr} % 100)); }
nsx() { local ns=$1; shift; ip netns exec "$ns" "$@"; }
log() { echo "rig: $*" >&2; }
