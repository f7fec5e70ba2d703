/**
 * The capture gateway's fake addresses (the fake-IP scheme of Clash's TUN mode): each name the
 * program looks up gets an address of its own from 198.18.0.0/15 (RFC 2544's benchmarking range,
 * never a real host), so each connection arrives carrying the name it was for, and the name is
 * resolved inside the tunnel, never in clear. One pool per captured program, for its life; past
 * MAX_NAMES the oldest name's address is given to the next one (as mihomo's pool wraps).
 */

const BASE = (198 << 24) | (18 << 16); // 198.18.0.0
const SIZE = 1 << 17; // /15
/** The first handed out (mihomo starts at .4: the network, the gateway and two spare below it). */
const FIRST = 4;
export const MAX_NAMES = 65_536;

function toIp(n: number): string {
  const v = (BASE + n) >>> 0;
  return `${v >>> 24}.${(v >>> 16) & 0xff}.${(v >>> 8) & 0xff}.${v & 0xff}`;
}

function offsetOf(ip: string): number | null {
  const p = ip.split('.').map(Number);
  if (p.length !== 4 || p[0] !== 198 || (p[1] !== 18 && p[1] !== 19)) return null;
  const v = ((p[0] << 24) | (p[1] << 16) | (p[2]! << 8) | p[3]!) >>> 0;
  return v - (BASE >>> 0);
}

export class FakeIps {
  readonly #byName = new Map<string, number>();
  readonly #byOffset = new Map<number, string>();
  #next = FIRST;

  /** Whether `ip` is in the fake range (whether or not a name holds it now). */
  static inRange(ip: string): boolean {
    return offsetOf(ip) !== null;
  }

  /** The name's address (the same one for as long as the name holds it). */
  addressFor(name: string): string {
    const key = name.toLowerCase();
    const had = this.#byName.get(key);
    if (had !== undefined) {
      // Used again: the most recent, last to be given away.
      this.#byName.delete(key);
      this.#byName.set(key, had);
      return toIp(had);
    }
    if (this.#byName.size >= MAX_NAMES) {
      const [oldest, offset] = this.#byName.entries().next().value as [string, number];
      this.#byName.delete(oldest);
      this.#byOffset.delete(offset);
    }
    let offset = this.#next;
    while (this.#byOffset.has(offset)) offset = offset + 1 >= SIZE - 1 ? FIRST : offset + 1;
    this.#next = offset + 1 >= SIZE - 1 ? FIRST : offset + 1;
    this.#byName.set(key, offset);
    this.#byOffset.set(offset, key);
    return toIp(offset);
  }

  /** The name a fake address stands for, or null (not fake, or given to no name now). */
  nameOf(ip: string): string | null {
    const offset = offsetOf(ip);
    return offset === null ? null : (this.#byOffset.get(offset) ?? null);
  }

  get size(): number {
    return this.#byName.size;
  }
}
