import type { PushedConfig } from './control-messages.js';
import type { ControlSession } from './control-session.js';
import { frame, type Framing } from './compression-framing.js';

/** How long a closing tunnel waits at most for the server to acknowledge our EXIT message. */
const EXIT_LINGER_MS = 2_000;
/** OCC magic + opcode 6 (EXIT), notes §6.5. */
const OCC_EXIT = Buffer.from('287f346bd4ef7a812d56b8d3afc5459c06', 'hex');

/**
 * Tells the server we are leaving so it frees our session now instead of at its ping-restart
 * (notes §6.5): the EXIT control message if it pushed `protocol-flags cc-exit`; over UDP
 * otherwise the OCC_EXIT data packet, to stock servers only (those push a peer-id; SoftEther
 * would hand the packet to its hub as IP). Over TCP, closing the connection says it. Returns how
 * it was said and what to wait for before the transport closes (null: nothing).
 */
export function notifyExit(c: {
  config: PushedConfig;
  session: ControlSession;
  proto: 'tcp' | 'udp';
  framing: Framing;
  sendRaw(packet: Buffer): void;
}): { via: 'control' | 'occ' | null; wait: { msgIdBefore: number } | null } {
  const data = c.session.sendingData;
  if (!data) return { via: null, wait: null };
  if (c.config.ccExit) {
    const sent = c.session.sendExit();
    if (sent) return { via: 'control', wait: sent };
  }
  if (c.proto === 'udp' && c.config.peerId !== null) {
    c.sendRaw(data.encrypt(frame(c.framing, OCC_EXIT)));
    return { via: 'occ', wait: null };
  }
  return { via: null, wait: null };
}

/**
 * The EXIT control message goes through TLS and the reliability layer: the transport is kept until
 * the server has acknowledged it (retransmissions included), for at most EXIT_LINGER_MS; then `done`.
 */
export function lingerForExitAck(session: ControlSession, msgIdBefore: number, done: () => void): void {
  const until = Date.now() + EXIT_LINGER_MS;
  const poll = setInterval(() => {
    if (session.exitAcknowledged(msgIdBefore) || Date.now() > until) {
      clearInterval(poll);
      done();
    }
  }, 20);
  poll.unref();
}
