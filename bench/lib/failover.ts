/**
 * Node failure shapes on the rig (#60), shared by the chaos suite (test/e2e/chaos-rig.test.ts,
 * outcomes) and `npm run bench:failover` (times): a real core over the rig's nodes, a new request
 * by a fresh name every 250 ms (no cache between it and the node's resolver), the active node
 * faulted inside its own namespace, and the time from the fault to the first good request through
 * another node. For a node whose resolver dies, a download by address runs through it across the
 * fault: its path stays healthy, so it must arrive whole while Gatehop moves new requests away.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { nodesSchema, statusSchema, type Status } from '../../core/api/index.js';
import { apiRequest } from '../../test/helpers/admin-client.js';
import { freePort } from '../../test/helpers/ports.js';
import { readLogFile } from '../../test/helpers/log-file.js';
import { socksGet } from '../../test/helpers/socks-http.js';
import type { Rig } from '../../test/rig/rig.js';
import { coreEnv, coreV8Flags } from './core-flags.js';

const ROOT = resolve(import.meta.dirname, '../..');
const TOKEN = 'failover-bench-admin-token-0123456789';
/** A new request this often: the figures' resolution (a user's page loads are denser still). */
const REQUEST_EVERY_MS = 250;

export const SHAPES = ['kill', 'blackhole', 'dns-dead', 'uplink-dead', 'full', 'crawl'] as const;
export type Shape = (typeof SHAPES)[number];

export interface ShapeRun {
  shape: Shape;
  /** The node faulted: the one in use at the fault. */
  node: string;
  /** From the fault to the first request (started after it) that failed; null: none failed. */
  firstFailureMs: number | null;
  /** From the fault to the first good request through another node; null: none within the timeout. */
  recoveredMs: number | null;
  /** The node that request left by. */
  recoveredVia: string | null;
  /** Requests started after the fault that failed before the recovery. */
  failedRequests: number;
  /** full: the node that took no new session (the best other one when the node in use was killed). */
  fullNode?: string;
  /** full: requests after the fault that went through that node anyway (it took a session it should not have). */
  viaFullNode?: number;
  /** crawl: what the core had learnt each node delivers before the fault (node → bytes/s), and the crawl's rate. */
  learnt?: Record<string, number>;
  /** dns-dead: the download by address through the faulted node arrived whole (null: not run). */
  healthyDownloadOk: boolean | null;
  healthyDownloadError?: string;
}

export interface FailoverCore {
  /** The nodes as /nodes lists them: id, state and score. */
  nodes(): Promise<Array<{ id: string; state: string; score: number | null }>>;
  proxyPort: number;
  adminPort: number;
  token: string;
  status(): Promise<Status>;
  logFile: string;
  stop(): Promise<void>;
}

/** A core over the rig (global mode: every request through a node), with `config` merged in. */
export async function startFailoverCore(rig: Rig, config: Record<string, unknown> = {}): Promise<FailoverCore> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gh-failover-'));
  const configPath = join(dataDir, 'gatehop.json');
  const logFile = join(dataDir, 'gatehop.log');
  writeFileSync(
    configPath,
    JSON.stringify({
      switching: { healthDnsName: 'files.test' },
      groups: { urlTest: { url: rig.url('/generate_204'), intervalMs: 600_000 } },
      ...config,
    }),
  );
  const proxyPort = await freePort();
  const adminPort = await freePort();
  const core: ChildProcess = spawn(
    process.execPath,
    [
      ...coreV8Flags(),
      join(ROOT, 'bin/gatehop.js'),
      ...['--egress', 'vpngate', '--api', rig.state.apiUrl, '--allow-private-nodes', '--mode', 'global'],
      ...['--listen', `127.0.0.1:${proxyPort}`, '--admin', `127.0.0.1:${adminPort}`, '--admin-token', TOKEN],
      ...['--data-dir', dataDir, '--config', configPath, '--log-file', logFile],
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env: coreEnv() },
  );
  let out = '';
  core.stdout!.on('data', (c: Buffer) => (out = (out + c.toString()).slice(-10_000)));
  core.stderr!.on('data', (c: Buffer) => (out = (out + c.toString()).slice(-10_000)));
  const exited = new Promise<number | null>((r) => core.once('exit', (code) => r(code)));
  await new Promise<void>((res, rej) => {
    const check = (): void => void (out.includes('gatehop ready:') && res());
    core.stdout!.on('data', check);
    void exited.then((code) => rej(new Error(`the core exited ${code}: ${out}`)));
  });
  const status = async (): Promise<Status> =>
    statusSchema.parse((await apiRequest(adminPort, 'GET', '/status', { token: TOKEN })).json());
  const nodes = async (): Promise<Array<{ id: string; state: string; score: number | null }>> =>
    nodesSchema.parse((await apiRequest(adminPort, 'GET', '/nodes', { token: TOKEN })).json()).nodes;
  return {
    nodes,
    proxyPort,
    adminPort,
    token: TOKEN,
    status,
    logFile,
    stop: async () => {
      if (core.exitCode === null) core.kill('SIGTERM');
      await exited;
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, fn: () => Promise<T | undefined>, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`failover: ${what} did not happen within ${ms} ms`);
    await sleep(200);
  }
}

/** A download of the rig's /big by address, paced by the server, through the proxy; resolves with what became of it. */
function downloadByAddress(rig: Rig, proxyPort: number, rate: number): Promise<{ ok: boolean; error?: string }> {
  return new Promise((res) => {
    const c = spawn('curl', [
      ...['-sS', '--max-time', '180', '--socks5', `127.0.0.1:${proxyPort}`],
      rig.url(rate > 0 ? `/big?rate=${rate}` : '/big'),
    ]);
    const hash = createHash('sha256');
    let err = '';
    c.stdout.on('data', (b: Buffer) => hash.update(b));
    c.stderr.on('data', (b: Buffer) => (err += b.toString()));
    c.on('exit', (code) => {
      if (code !== 0) return res({ ok: false, error: `curl exit ${code}: ${err.trim()}` });
      const sha = hash.digest('hex');
      res(sha === rig.state.bigSha256 ? { ok: true } : { ok: false, error: 'the download differs from the source' });
    });
  });
}

/**
 * The fault for `shape` on `node`; resolves with what puts it back. `full`: the node Gatehop would
 * take next is already full (see fillNext), and the node in use is killed.
 */
function fault(rig: Rig, shape: Shape, node: string): () => Promise<void> {
  switch (shape) {
    case 'full':
      rig.kill(node);
      return () => rig.restart(node);
    case 'kill':
      rig.kill(node);
      return () => rig.restart(node);
    case 'blackhole':
      rig.blackhole(node);
      return async () => rig.unblackhole(node);
    case 'dns-dead': {
      const back = rig.silenceResolver(node);
      return async () => back();
    }
    case 'uplink-dead': {
      const back = rig.cutUplinkTcp(node);
      return async () => back();
    }
    case 'crawl':
      // 400 kbit/s, 50 KB/s, from the node towards Gatehop: a volunteer's machine slowed to a crawl.
      rig.rateLimit(node, CRAWL_KBIT);
      return async () => rig.clearRateLimit(node);
  }
}

const CRAWL_KBIT = 400;

/**
 * crawl: a node is left for one known to be much faster, so the core must have seen what each
 * delivers, as a user's downloads would have shown it: each node picked in turn (POST /switch),
 * a download through it, a health window to take it in, then automatic selection again.
 */
async function learnNodeSpeeds(rig: Rig, core: FailoverCore, windowMs: number): Promise<Record<string, number>> {
  const api = (method: string, path: string, body?: unknown) =>
    apiRequest(core.adminPort, method, path, { token: core.token, ...(body ? { body } : {}) });
  const learnt: Record<string, number> = {};
  for (const n of rig.softether) {
    const r = await api('POST', '/switch', { nodeId: n.name });
    if (r.status !== 202) throw new Error(`failover: POST /switch ${n.name}: ${r.status}`);
    await until(
      `${n.name} in use`,
      async () => ((await core.status()).active?.nodeId === n.name ? true : undefined),
      60_000,
    );
    const t0 = Date.now();
    const d = await downloadByAddress(rig, core.proxyPort, 0);
    if (!d.ok) throw new Error(`failover: learning ${n.name}: ${d.error}`);
    learnt[n.name] = Math.round((rig.state.bigBytes * 1000) / Math.max(1, Date.now() - t0));
    await sleep(windowMs + 500); // a health window takes the download in
  }
  const r = await api('POST', '/mode', { auto: true });
  if (r.status !== 200) throw new Error(`failover: POST /mode: ${r.status}`);
  return learnt;
}

/** An unpaced download of /big by address, read as fast as it comes: what shows a crawl. Resolves with how to stop it. */
function bulkDownload(rig: Rig, proxyPort: number): () => void {
  const c = spawn(
    'curl',
    ['-sS', '-o', '/dev/null', '--max-time', '300', '--socks5', `127.0.0.1:${proxyPort}`, rig.url('/big')],
    {
      stdio: 'ignore',
    },
  );
  return () => void c.kill('SIGKILL');
}

/**
 * One shape: waits for a steady core, faults the node in use, and measures until a request goes
 * through another node (or `timeoutMs`); puts the node back before it returns.
 */
export async function runShape(
  rig: Rig,
  core: FailoverCore,
  shape: Shape,
  o: { timeoutMs?: number; downloadRate?: number; windowMs?: number } = {},
): Promise<ShapeRun> {
  const timeoutMs = o.timeoutMs ?? 120_000;
  const learnt = shape === 'crawl' ? await learnNodeSpeeds(rig, core, o.windowMs ?? 15_000) : undefined;
  const exitOf = new Map(rig.state.nodes.map((n) => [n.exitAddress, n.name]));
  const steady = await until(
    'a steady core (a node in use, no switch running)',
    async () => {
      const s = await core.status();
      return s.active?.nodeId && s.switches.inProgress === null ? s.active.nodeId : undefined;
    },
    120_000,
  );
  const node = rig.state.nodes.find((n) => n.name === steady || n.id === steady)!.name;
  // The path by address through the node stays healthy when only its resolver dies.
  const download = shape === 'dns-dead' ? downloadByAddress(rig, core.proxyPort, o.downloadRate ?? 400_000) : null;
  if (download) await sleep(1_000); // under way through this node before the fault

  let n = 0;
  const requests: Array<{ startedAt: number; ok: boolean; via: string | null }> = [];
  let stop = false;
  const inflight: Array<Promise<unknown>> = [];
  const loop = (async () => {
    while (!stop) {
      const startedAt = Date.now();
      // A fresh name each time: nothing between the request and the node's resolver may answer it.
      const name = `r${process.pid}x${n++}.files.test`;
      inflight.push(
        socksGet(core.proxyPort, name, '/ip', 8_000).then(
          (r) => requests.push({ startedAt, ok: r.status === 200, via: exitOf.get(r.body.toString().trim()) ?? null }),
          () => requests.push({ startedAt, ok: false, via: null }),
        ),
      );
      await sleep(REQUEST_EVERY_MS);
    }
  })();

  // full: the best other node, by the latest ranking, is the one a switch tries first.
  const next =
    shape === 'full'
      ? ((await core.nodes())
          .filter((x) => x.id !== node && x.state === 'candidate' && x.score !== null)
          .sort((a, b) => b.score! - a.score!)[0]?.id ?? null)
      : null;
  if (shape === 'full' && !next) throw new Error('failover: no other ranked node to fill');
  const nextName = next ? rig.state.nodes.find((x) => x.name === next || x.id === next)!.name : null;
  // A full server, as a volunteer's at its limit: someone else's session on it (Debian's openvpn
  // in the rig's client namespace), and the hub's limit set to the sessions it has.
  const unfill = nextName ? await fillNode(rig, nextName) : null;
  const faultAt = Date.now();
  const heal = fault(rig, shape, node);
  // A crawl shows only to downloads: one runs through the node from the fault on.
  const stopBulk = shape === 'crawl' ? bulkDownload(rig, core.proxyPort) : null;
  let recovered: { startedAt: number; via: string | null } | undefined;
  try {
    recovered = await until(
      `a good request through another node than ${node} (${shape})`,
      async () => {
        // The first request started after the fault that went through another node; the one that
        // ended first is not it (a late answer from before the fault must not count).
        const good = requests
          .filter((r) => r.startedAt >= faultAt && r.ok && r.via !== null && r.via !== node && r.via !== nextName)
          .sort((a, b) => a.startedAt - b.startedAt)[0];
        return good;
      },
      timeoutMs,
    ).catch(() => undefined);
  } finally {
    stop = true;
    stopBulk?.();
    await loop;
    await Promise.all(inflight); // the last requests' answers or timeouts (8 s at most)
    await heal();
    await unfill?.();
  }
  const after = requests.filter((r) => r.startedAt >= faultAt);
  const firstFailure = after.filter((r) => !r.ok).sort((a, b) => a.startedAt - b.startedAt)[0];
  const dl = download ? await download : null;
  return {
    shape,
    node,
    firstFailureMs: firstFailure ? firstFailure.startedAt - faultAt : null,
    recoveredMs: recovered ? recovered.startedAt - faultAt : null,
    recoveredVia: recovered?.via ?? null,
    failedRequests: after.filter((r) => !r.ok && (!recovered || r.startedAt < recovered.startedAt)).length,
    ...(nextName ? { fullNode: nextName, viaFullNode: after.filter((r) => r.via === nextName).length } : {}),
    ...(learnt ? { learnt } : {}),
    healthyDownloadOk: dl ? dl.ok : null,
    ...(dl?.error ? { healthyDownloadError: dl.error } : {}),
  };
}

/** Makes `node` full: another client's session on it, and no room for one more. Resolves with what empties it. */
async function fillNode(rig: Rig, node: string): Promise<() => Promise<void>> {
  const other = await rig.nativeClient(node, 'tcp');
  const lift = rig.fill(node);
  return async () => {
    lift();
    await other.close();
  };
}

/** What the core's log says happened, for a failing run's message: switches and health lines. */
export function failoverLogTail(logFile: string, lines = 30): string {
  try {
    return readLogFile(logFile)
      .split('\n')
      .filter((l) => /switch|health-window|node-left|tunnel-active|died|candidate|backoff/.test(l))
      .slice(-lines)
      .join('\n');
  } catch {
    return '(no log)';
  }
}
