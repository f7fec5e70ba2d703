import { macForNode } from './sevpn-link.js';

/**
 * The MACs of the SE-VPN tunnels open to each node: the first one has the node's stable MAC (so the
 * hub's ARP table and SecureNAT's DHCP lease follow us from one session to the next); one opened
 * while another is still up (make-before-break to the same node, an honesty check's own tunnel
 * beside the one in use) gets a MAC of its own. Two sessions with one MAC on a hub take each other's
 * frames: the hub sends them to whichever spoke last, and the other tunnel goes deaf.
 */
export class HubMacs {
  readonly #taken = new Map<string, Set<number>>();

  /** A MAC (hex) for a new tunnel to `nodeId`; release it when that tunnel is closed or failed to open. */
  take(nodeId: string): { mac: string; release(): void } {
    let slots = this.#taken.get(nodeId);
    if (!slots) this.#taken.set(nodeId, (slots = new Set()));
    let slot = 0;
    while (slots.has(slot)) slot++;
    slots.add(slot);
    let released = false;
    return {
      mac: macForNode(slot === 0 ? nodeId : `${nodeId}#${slot}`).toString('hex'),
      release: () => {
        if (released) return;
        released = true;
        slots.delete(slot);
        if (slots.size === 0) this.#taken.delete(nodeId);
      },
    };
  }

  /** Tunnels to `nodeId` holding a MAC now. */
  held(nodeId: string): number {
    return this.#taken.get(nodeId)?.size ?? 0;
  }
}
