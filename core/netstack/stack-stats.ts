import type { StackStats } from './stack-types.js';

/** The words gh_stats writes (glue.c lists them in order). */
export const STATS_WORDS = 17;

/** lwIP's counters as glue.c's gh_stats lays them out. */
export function decodeStats(s: Uint32Array): Pick<StackStats, 'ip' | 'tcp' | 'udp' | 'icmp'> {
  return {
    ip: { xmit: s[0]!, recv: s[1]!, drop: s[2]!, chkerr: s[14]!, lenerr: s[15]! },
    tcp: {
      xmit: s[3]!,
      recv: s[4]!,
      drop: s[5]!,
      retransmissions: s[6]!,
      chkerr: s[7]!,
      active: s[13]!,
      windowUpdatesResent: s[16]!,
    },
    udp: { xmit: s[8]!, recv: s[9]!, drop: s[10]! },
    icmp: { xmit: s[11]!, recv: s[12]! },
  };
}
