import { readdir, readFile, readlink } from 'node:fs/promises';
import type { Socket } from 'node:net';
import { basename } from 'node:path';
import type { ProcessLookup } from '../socks5/index.js';

/**
 * The local program behind a client connection, for PROCESS-NAME and PROCESS-PATH rules. Linux:
 * the connection's socket inode from /proc/net/tcp{,6} (its local end is the client's address and
 * port), then the process holding that inode among /proc/<pid>/fd, then its /proc/<pid>/exe.
 * Asked only when a rule needs it. Other systems: not found (null) for now.
 */
export function processLookup(platform: NodeJS.Platform = process.platform): ProcessLookup | undefined {
  if (platform !== 'linux') return undefined;
  return async (socket: Socket) => {
    const inode = await socketInode(socket);
    if (inode === null) return null;
    const pid = await pidHolding(inode);
    if (pid === null) return null;
    const path = await readlink(`/proc/${pid}/exe`).catch(() => null);
    if (path) return { name: basename(path.replace(/ \(deleted\)$/, '')), path };
    const comm = await readFile(`/proc/${pid}/comm`, 'utf8').catch(() => null);
    return comm ? { name: comm.trim(), path: '' } : null;
  };
}

/** The inode of the client's end of `socket` (its local address and port in /proc/net/tcp). */
async function socketInode(socket: Socket): Promise<string | null> {
  const port = socket.remotePort;
  const ourPort = socket.localPort;
  if (!port || !ourPort) return null;
  const want = port.toString(16).toUpperCase().padStart(4, '0');
  const ours = ourPort.toString(16).toUpperCase().padStart(4, '0');
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await readFile(table, 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      // sl local_address rem_address st tx:rx tr:tm retrnsmt uid timeout inode
      if (f.length < 10) continue;
      if (f[1]!.endsWith(`:${want}`) && f[2]!.endsWith(`:${ours}`)) return f[9]!;
    }
  }
  return null;
}

async function pidHolding(inode: string): Promise<number | null> {
  const link = `socket:[${inode}]`;
  const pids = (await readdir('/proc').catch(() => [] as string[])).filter((d) => /^\d+$/.test(d));
  for (const pid of pids) {
    const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
    for (const fd of fds) {
      if ((await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')) === link) return Number(pid);
    }
  }
  return null;
}
