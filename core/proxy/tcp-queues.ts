import { existsSync, readFileSync } from 'node:fs';

/**
 * What the kernel still holds of a TCP connection's data: our send queue (written, not yet
 * acknowledged) and, when the client is on this machine (the usual case for a desktop proxy on
 * 127.0.0.1), the client's receive queue (arrived, not yet read by the application). Bytes there
 * have not been taken by the client: on loopback the two together hold 6–10 MB, so counting at
 * write() showed a slow client's first seconds as a spike. Linux only (/proc/net/tcp, tcp6); on
 * other systems nothing is known and nothing is subtracted.
 *
 * /proc does not split our send queue into unsent and unacknowledged bytes, so a byte the client
 * has read but not yet acknowledged (a delayed ACK: up to ~40 ms) still counts as queued: the count
 * is a lower bound that catches up within that.
 */
export class TcpQueues {
  /** Read this turn of the event loop: a view that asks for every session reads /proc once. */
  #fresh = false;
  #maps: Array<Map<string, { tx: number; rx: number }>> = [];
  readonly #files: string[];

  constructor(files = ['/proc/net/tcp', '/proc/net/tcp6']) {
    this.#files = process.platform === 'linux' ? files.filter((f) => existsSync(f)) : [];
  }

  get available(): boolean {
    return this.#files.length > 0;
  }

  /** Bytes sent by `local` towards `remote` that the remote application has not read yet (as far as this machine can see). */
  queued(local: { address: string; port: number }, remote: { address: string; port: number }): number {
    if (this.#files.length === 0) return 0;
    const l = `${plain(local.address)}:${local.port}`;
    const r = `${plain(remote.address)}:${remote.port}`;
    // The most any sample says: a lower bound of what the client took (see #read).
    let most = 0;
    for (const map of this.#read())
      most = Math.max(most, (map.get(`${l}>${r}`)?.tx ?? 0) + (map.get(`${r}>${l}`)?.rx ?? 0));
    return most;
  }

  /**
   * Two samples, back to back. The kernel writes /proc/net/tcp line by line while connections move
   * on: bytes that go from our send queue to the client's receive queue between the two lines can be
   * seen in neither, and a count that went up too far would then stand still (it never goes back).
   * The larger of two samples makes that unlikely; what is left is caught up at the next sample.
   */
  #read(): Array<Map<string, { tx: number; rx: number }>> {
    // Never older than this turn: a client that has just read must not be counted by an earlier sample.
    if (this.#fresh) return this.#maps;
    const maps = [0, 1].map(() => {
      const map = new Map<string, { tx: number; rx: number }>();
      for (const f of this.#files) {
        try {
          parseProcNetTcp(readFileSync(f, 'latin1'), map);
        } catch {
          /* gone (the file is always there on Linux); nothing is subtracted */
        }
      }
      return map;
    });
    this.#maps = maps;
    this.#fresh = true;
    setImmediate(() => {
      this.#fresh = false;
    });
    return maps;
  }
}

/** Lines of /proc/net/tcp or tcp6 into `local>remote` → queues; only connections with something queued. */
export function parseProcNetTcp(
  text: string,
  into = new Map<string, { tx: number; rx: number }>(),
): Map<string, { tx: number; rx: number }> {
  const lines = text.split('\n');
  for (let i = 1; i < lines.length; i++) {
    const f = lines[i]!.trim().split(/\s+/);
    if (f.length < 5) continue;
    const [txHex, rxHex] = f[4]!.split(':');
    const tx = parseInt(txHex ?? '0', 16);
    const rx = parseInt(rxHex ?? '0', 16);
    if (!(tx > 0 || rx > 0)) continue;
    const local = endpoint(f[1]!);
    const remote = endpoint(f[2]!);
    if (local && remote) into.set(`${local}>${remote}`, { tx, rx });
  }
  return into;
}

/** "0100007F:A1C1" (IPv4, little-endian) or 32 hex digits (IPv6, four little-endian words) → "ip:port". */
function endpoint(hex: string): string | null {
  const [addr, portHex] = hex.split(':');
  if (!addr || !portHex) return null;
  const port = parseInt(portHex, 16);
  if (addr.length === 8)
    return `${[3, 2, 1, 0].map((i) => parseInt(addr.slice(i * 2, i * 2 + 2), 16)).join('.')}:${port}`;
  if (addr.length !== 32) return null;
  const bytes: number[] = [];
  for (let w = 0; w < 4; w++)
    for (const i of [3, 2, 1, 0]) bytes.push(parseInt(addr.slice(w * 8 + i * 2, w * 8 + i * 2 + 2), 16));
  // IPv4-mapped (::ffff:a.b.c.d): the same connection a dual-stack listener sees.
  if (bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff)
    return `${bytes.slice(12).join('.')}:${port}`;
  const groups = Array.from({ length: 8 }, (_, g) => ((bytes[g * 2]! << 8) | bytes[g * 2 + 1]!).toString(16));
  return `${groups.join(':')}:${port}`;
}

/** An address as /proc spells it: IPv4-mapped as IPv4, IPv6 expanded without zero compression. */
function plain(address: string): string {
  if (address.startsWith('::ffff:') && address.includes('.')) return address.slice(7);
  if (!address.includes(':')) return address;
  const [head, tail] = address.split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...new Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return groups.map((g) => parseInt(g, 16).toString(16)).join(':');
}
