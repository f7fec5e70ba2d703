/**
 * One download of the rig's large file through a tunnel, in a worker thread (as the app runs its
 * tunnels, with the same heap limits: bench/tunnel.ts), so that bench:tunnel can run each data
 * engine in the same run: the worker's GATEHOP_NATIVE decides which one its DataChannels use.
 * Posts MiB/s, the process's CPU and this thread's garbage collections.
 */
import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import { silentLogger } from '../../core/common/index.js';
import { openLink, stackOptionsOf, type LinkSpec } from '../../core/egress/index.js';
import { Stack } from '../../core/netstack/index.js';
import { dataEngineStatus } from '../../core/ovpn/index.js';

export interface DownloadJob {
  spec: LinkSpec;
  inetAddress: string;
  bigBytes: number;
}

export interface DownloadResult {
  mibs: number;
  /** CPU seconds per GiB, user and system apart (the whole process: the main thread is idle meanwhile). */
  user: number;
  system: number;
  engine: string;
  /**
   * This thread's full (mark-compact) collections per GiB: a run whose young generation V8 grew
   * can fall into one every ~100 ms, ~20 % more CPU (bench/README.md, "SoftEther over UDP").
   */
  markCompacts: number;
  /** This thread's scavenges (young-generation collections) per GiB. */
  scavenges: number;
}

/** Counts this thread's collections by kind while it observes. */
function gcCounter(): { stop: () => { major: number; minor: number } } {
  let major = 0;
  let minor = 0;
  const count = (entries: PerformanceEntry[]): void => {
    for (const e of entries) {
      const kind = (e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
      if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) major++;
      else if (kind === constants.NODE_PERFORMANCE_GC_MINOR) minor++;
    }
  };
  const observer = new PerformanceObserver((list) => count(list.getEntries()));
  observer.observe({ entryTypes: ['gc'] });
  return {
    stop: () => {
      count(observer.takeRecords());
      observer.disconnect();
      return { major, minor };
    },
  };
}

const job = workerData as DownloadJob;
const { link, config } = await openLink(job.spec, { logger: silentLogger(), timeoutMs: 30_000 });
const stack = new Stack({ ...stackOptionsOf(config), output: (p) => link.write(p) });
link.onPackets((batch) => stack.inputBatch(batch));
try {
  // An Ethernet link (SE-VPN) has its address once the hub's DHCP gives one.
  if (config.ethernet) await stack.whenLeased({ timeoutMs: 30_000 });
  const s = await stack.connectTcp(job.inetAddress, 80);
  s.on('error', () => {});
  let n = 0;
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const gcs = gcCounter();
  s.on('data', (c: Buffer) => (n += c.length));
  s.write('GET /big HTTP/1.1\r\nHost: files.test\r\nConnection: close\r\n\r\n');
  await new Promise((r) => s.once('end', r));
  const secs = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(c0);
  const { major, minor } = gcs.stop();
  if (n < job.bigBytes) throw new Error(`short download: ${n} of ${job.bigBytes} bytes`);
  const perGiB = (1 << 30) / n / 1e6;
  const result: DownloadResult = {
    mibs: n / secs / (1 << 20),
    user: cpu.user * perGiB,
    system: cpu.system * perGiB,
    engine: job.spec.protocol === 'openvpn' ? dataEngineStatus().engine : 'tls',
    markCompacts: (major * (1 << 30)) / n,
    scavenges: (minor * (1 << 30)) / n,
  };
  parentPort!.postMessage(result);
} finally {
  stack.close();
  link.close();
}
