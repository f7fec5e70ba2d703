import { execFile } from 'node:child_process';
import { readdir, readFile, readlink } from 'node:fs/promises';
import type { Socket } from 'node:net';
import { basename } from 'node:path';
import { hostPort } from '../common/index.js';
import type { ProcessLookup } from './router.js';

/** Runs a program (no shell) and gives its stdout; the deadline keeps a slow tool from holding a flow. */
export type ToolRunner = (file: string, args: readonly string[]) => Promise<string>;

const execRunner: ToolRunner = (file, args) =>
  new Promise((resolve, reject) => {
    execFile(file, [...args], { timeout: 5_000, maxBuffer: 4 * 1024 * 1024, windowsHide: true }, (err, stdout) =>
      // execFile's error is an Error (ExecFileException); the rule's typing cannot see it through the overloads.
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
      err ? reject(err) : resolve(stdout),
    );
  });

/**
 * The local program behind a client connection, for PROCESS-NAME and PROCESS-PATH rules, asked only
 * when a rule needs it:
 *   - Linux: the socket's inode from /proc/net/tcp{,6}, the process holding it among
 *     /proc/<pid>/fd, and its /proc/<pid>/exe;
 *   - Windows: `netstat -ano -p TCP` for the PID owning the client's end, `tasklist` for its image
 *     name (`curl.exe`); the path is not looked up (PROCESS-PATH does not match there);
 *   - macOS: `lsof` for the PID and command owning the client's end, `ps -o comm=` for its path.
 */
export function processLookup(
  platform: NodeJS.Platform = process.platform,
  run: ToolRunner = execRunner,
  stats: ProcessLookupStats = { fullWalks: 0, recentHits: 0 },
): ProcessLookup | undefined {
  const once = perSocket();
  if (platform === 'win32') return once((socket) => windowsLookup(socket, run));
  if (platform === 'darwin') return once((socket) => macLookup(socket, run));
  if (platform !== 'linux') return undefined;
  const recent = new RecentPids(RECENT_PIDS);
  return once(async (socket: Socket) => {
    const inode = await socketInode(socket);
    if (inode === null) return null;
    const pid = await pidHolding(inode, recent, stats);
    if (pid === null) return null;
    const path = await readlink(`/proc/${pid}/exe`).catch(() => null);
    if (path) return { name: basename(path.replace(/ \(deleted\)$/, '')), path };
    const comm = await readFile(`/proc/${pid}/comm`, 'utf8').catch(() => null);
    return comm ? { name: comm.trim(), path: '' } : null;
  });
}

/** How the Linux lookups went: walks of every process, and sockets found among recent owners. */
export interface ProcessLookupStats {
  fullWalks: number;
  recentHits: number;
}

/** Processes whose sockets were found lately, looked at first (a browser opens many connections). */
const RECENT_PIDS = 16;

class RecentPids {
  readonly #pids: number[] = [];
  constructor(private readonly max: number) {}

  get list(): readonly number[] {
    return this.#pids;
  }

  touch(pid: number): void {
    const i = this.#pids.indexOf(pid);
    if (i >= 0) this.#pids.splice(i, 1);
    this.#pids.unshift(pid);
    if (this.#pids.length > this.max) this.#pids.pop();
  }
}

/**
 * One lookup per client connection, however many rules and requests ask (an HTTP keep-alive
 * connection carries many flows): the answer is kept with the socket and goes with it.
 */
function perSocket(): (lookup: ProcessLookup) => ProcessLookup {
  const known = new WeakMap<Socket, ReturnType<ProcessLookup>>();
  return (lookup) => (socket) => {
    let p = known.get(socket);
    if (!p) known.set(socket, (p = lookup(socket)));
    return p;
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

/**
 * The process holding the socket `inode`: the processes that held recent clients' sockets first
 * (most connections come from a few programs), then every process (one readlink per descriptor,
 * which on a desktop with thousands of them is what a lookup costs).
 */
async function pidHolding(inode: string, recent: RecentPids, stats: ProcessLookupStats): Promise<number | null> {
  const link = `socket:[${inode}]`;
  const holds = async (pid: string): Promise<boolean> => {
    const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
    for (const fd of fds) if ((await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')) === link) return true;
    return false;
  };
  for (const pid of [...recent.list])
    if (await holds(String(pid))) {
      stats.recentHits++;
      recent.touch(pid);
      return pid;
    }
  stats.fullWalks++;
  const pids = (await readdir('/proc').catch(() => [] as string[])).filter((d) => /^\d+$/.test(d));
  for (const pid of pids)
    if (!recent.list.includes(Number(pid)) && (await holds(pid))) {
      recent.touch(Number(pid));
      return Number(pid);
    }
  return null;
}

/** The client's end and ours, as the tools print them (`127.0.0.1:52344`, `[::1]:52344`). */
function ends(socket: Socket): { client: string; ours: string } | null {
  const { remoteAddress: ra, remotePort: rp, localAddress: la, localPort: lp } = socket;
  if (!ra || !rp || !la || !lp) return null;
  const at = (a: string, p: number): string => hostPort(a.replace(/^::ffff:/, ''), p);
  return { client: at(ra, rp), ours: at(la, lp) };
}

/** `netstat -ano -p TCP`: the PID on the row whose local end is `local` and foreign end `foreign`. */
export function parseNetstatPid(out: string, local: string, foreign: string): number | null {
  for (const line of out.split(/\r?\n/)) {
    const f = line.trim().split(/\s+/);
    if (f[0]?.toUpperCase() === 'TCP' && f[1] === local && f[2] === foreign && /^\d+$/.test(f[4] ?? ''))
      return Number(f[4]);
  }
  return null;
}

/** `tasklist /FI "PID eq N" /FO CSV /NH`: the image name (`"curl.exe","4242",…`), or null (`INFO: No tasks…`). */
export function parseTasklistName(out: string): string | null {
  const m = /^"([^"]+)","(\d+)"/m.exec(out.trim());
  return m ? m[1]! : null;
}

/** `lsof +c 0 -nP -iTCP -sTCP:ESTABLISHED -Fpcn`: the PID and command of the process whose entry is `client->ours`. */
export function parseLsof(out: string, client: string, ours: string): { pid: number; command: string } | null {
  let pid: number | null = null;
  let command = '';
  for (const line of out.split('\n')) {
    if (line.startsWith('p')) {
      pid = Number(line.slice(1));
      command = '';
    } else if (line.startsWith('c')) command = line.slice(1);
    else if (line.startsWith('n') && line.slice(1) === `${client}->${ours}` && pid !== null) return { pid, command };
  }
  return null;
}

async function windowsLookup(socket: Socket, run: ToolRunner): Promise<{ name: string; path: string } | null> {
  const e = ends(socket);
  if (!e) return null;
  const pid = parseNetstatPid(await run('netstat', ['-ano', '-p', 'TCP']), e.client, e.ours);
  if (pid === null) return null;
  const name = parseTasklistName(await run('tasklist', ['/FI', `PID eq ${pid}`, '/FO', 'CSV', '/NH']));
  return name ? { name, path: '' } : null;
}

async function macLookup(socket: Socket, run: ToolRunner): Promise<{ name: string; path: string } | null> {
  const e = ends(socket);
  if (!e) return null;
  const hit = parseLsof(await run('lsof', ['+c', '0', '-nP', '-iTCP', '-sTCP:ESTABLISHED', '-Fpcn']), e.client, e.ours);
  if (!hit) return null;
  const path = (await run('ps', ['-o', 'comm=', '-p', String(hit.pid)]).catch(() => '')).trim();
  return { name: path ? basename(path) : hit.command, path };
}
