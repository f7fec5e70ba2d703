import { isIP, Socket } from 'node:net';
import { loadNative } from '../common/index.js';

/**
 * The longest IP packet Gatehop lets a carrier put on the path to a node (#60): 1,280 bytes, the
 * least any IPv6 path must carry and what tunnelled, PPPoE and mobile paths reliably do. A path
 * narrower than the links at either end that drops longer packets without an ICMP answer (an MTU
 * black hole) lets handshakes through and stalls every transfer at its first full-size packet; a
 * carrier that never sends one is not stalled. The cost is a few percent of payload per packet.
 */
export const CARRIER_PATH_MTU = 1_280;

/** IPv4 (20) and TCP (20) headers: a TCP carrier's segments carry at most this much. */
export const CARRIER_TCP_MSS = CARRIER_PATH_MTU - 40;

/**
 * A TCP socket, not yet connected, whose SYN offers CARRIER_TCP_MSS (gatehop-native's tcpSocket),
 * so the node's kernel sends segments that fit CARRIER_PATH_MTU; null where that cannot be had (no
 * native module, not Linux, a name rather than an IPv4 address): the caller's socket then offers
 * its link's MSS, as before.
 */
export function clampedTcpSocket(host: string): Socket | null {
  if (isIP(host) !== 4) return null;
  const native = loadNative();
  if (!native) return null;
  let fd: number;
  try {
    fd = native.tcpSocket(CARRIER_TCP_MSS);
  } catch {
    return null; // GATEHOP_NATIVE_UNSUPPORTED or a refused option: the unclamped path still works
  }
  return new Socket({ fd });
}
