/**
 * One download of the rig's large file through a tunnel, in a worker thread (as the app runs its
 * tunnels), so that bench:tunnel can run each data engine in the same run: the worker's
 * GATEHOP_NATIVE decides which one its DataChannels use. Posts MiB/s and the process's CPU.
 */
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
  s.on('data', (c: Buffer) => (n += c.length));
  s.write('GET /big HTTP/1.1\r\nHost: files.test\r\nConnection: close\r\n\r\n');
  await new Promise((r) => s.once('end', r));
  const secs = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(c0);
  if (n < job.bigBytes) throw new Error(`short download: ${n} of ${job.bigBytes} bytes`);
  const perGiB = (1 << 30) / n / 1e6;
  const result: DownloadResult = {
    mibs: n / secs / (1 << 20),
    user: cpu.user * perGiB,
    system: cpu.system * perGiB,
    engine: job.spec.protocol === 'openvpn' ? dataEngineStatus().engine : 'tls',
  };
  parentPort!.postMessage(result);
} finally {
  stack.close();
  link.close();
}
