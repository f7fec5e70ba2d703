/**
 * What a process's open descriptors are, by kind: a bare count says "one more", a census says
 * "one more TCP socket to 10.9.0.1:443 in CLOSE_WAIT". Sockets are named from the process's own
 * network namespace tables (/proc/<pid>/net/*), everything else by its link target with inode
 * numbers dropped, so two censuses compare kind by kind.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

const TCP_STATES: Record<string, string> = {
  '01': 'ESTABLISHED',
  '02': 'SYN_SENT',
  '03': 'SYN_RECV',
  '04': 'FIN_WAIT1',
  '05': 'FIN_WAIT2',
  '06': 'TIME_WAIT',
  '07': 'CLOSE',
  '08': 'CLOSE_WAIT',
  '09': 'LAST_ACK',
  '0A': 'LISTEN',
  '0B': 'CLOSING',
};

/** "0100007F:0438" → "127.0.0.1:1080" (IPv4 only; IPv6 kept as hex, which is enough to compare). */
function address(hex: string): string {
  const [ip, port] = hex.split(':') as [string, string];
  const p = parseInt(port, 16);
  if (ip.length !== 8) return `[${ip}]:${p}`;
  const b = ip
    .match(/../g)!
    .map((x) => parseInt(x, 16))
    .reverse();
  return `${b.join('.')}:${p}`;
}

interface SocketInfo {
  name: string;
  local: string;
  remote: string;
}

function socketTable(pid: number): Map<string, SocketInfo> {
  const table = new Map<string, SocketInfo>();
  for (const proto of ['tcp', 'tcp6', 'udp', 'udp6']) {
    let text: string;
    try {
      text = readFileSync(`/proc/${pid}/net/${proto}`, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10) continue;
      const state = proto.startsWith('tcp') ? ` ${TCP_STATES[f[3]!] ?? f[3]}` : '';
      // Local ports of outgoing sockets are ephemeral: keep the remote end and the state, which
      // is what says whose socket it is; a listener keeps its local address.
      const local = address(f[1]!);
      const remote = address(f[2]!);
      const name = remote.endsWith(':0') ? `${proto} listen ${local}` : `${proto} → ${remote}${state}`;
      table.set(f[9]!, { name, local, remote });
    }
  }
  try {
    for (const line of readFileSync(`/proc/${pid}/net/unix`, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length >= 7) table.set(f[6]!, { name: `unix ${f[7] ?? '(unnamed)'}`, local: '', remote: '' });
    }
  } catch {
    // no unix table: the sockets are then named by their inode kind alone
  }
  return table;
}

function socketInodes(pid: number): Array<{ fd: string; target: string }> {
  const out: Array<{ fd: string; target: string }> = [];
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      out.push({ fd, target: readlinkSync(`/proc/${pid}/fd/${fd}`) });
    } catch {
      // closed between the listing and the link
    }
  }
  return out;
}

/** The local addresses of `pid`'s open TCP sockets: a harness's own connections, seen from its end. */
export function openTcpEnds(pid: number): Set<string> {
  const table = socketTable(pid);
  const ends = new Set<string>();
  for (const { target } of socketInodes(pid)) {
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    const info = inode ? table.get(inode) : undefined;
    if (info?.name.startsWith('tcp')) ends.add(info.local);
  }
  return ends;
}

/** The census kind of a connection whose other end is still open in the process that measures. */
export const HARNESS_CONNECTION = 'tcp ← the harness (its end still open)';

/**
 * Open descriptors of `pid`, counted by kind. A TCP socket whose peer is one of `harnessEnds`
 * (openTcpEnds of the measuring process) is the core's side of a connection the harness still
 * holds (an HTTP keep-alive, a stream it has not closed): counted apart as HARNESS_CONNECTION.
 */
export function fdCensus(pid: number, harnessEnds: Set<string> = new Set()): Map<string, number> {
  const table = socketTable(pid);
  const census = new Map<string, number>();
  for (const { target } of socketInodes(pid)) {
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    const info = inode ? table.get(inode) : undefined;
    const kind = inode
      ? info && harnessEnds.has(info.remote)
        ? HARNESS_CONNECTION
        : (info?.name ?? 'socket (other family)')
      : target.replace(/\[\d+\]$/, '');
    census.set(kind, (census.get(kind) ?? 0) + 1);
  }
  return census;
}

/** The kinds whose counts differ, as "+1 tcp → 10.9.0.1:443 CLOSE_WAIT". */
export function fdCensusDiff(before: Map<string, number>, after: Map<string, number>): string[] {
  const out: string[] = [];
  for (const kind of new Set([...before.keys(), ...after.keys()])) {
    const d = (after.get(kind) ?? 0) - (before.get(kind) ?? 0);
    if (d !== 0) out.push(`${d > 0 ? '+' : ''}${d} ${kind}`);
  }
  return out.sort();
}

/**
 * libuv opens /dev/null once per event loop, the first time that loop makes a stream, and keeps it
 * for the loop's life (its reserve for accepting past EMFILE). A pooled tunnel thread that once
 * carried a TCP tunnel holds one until it ends: not a leak while there are no more of them than
 * event loops (each loop has one epoll descriptor), the process's own stdin aside.
 */
export function devNullWithinLoops(census: Map<string, number>): boolean {
  return (census.get('/dev/null') ?? 0) <= (census.get('anon_inode:[eventpoll]') ?? 0) + 1;
}

/** A census with the kinds `without` left out, summed. */
export function censusTotal(census: Map<string, number>, without: string[] = []): number {
  let n = 0;
  for (const [kind, count] of census) if (!without.includes(kind)) n += count;
  return n;
}
