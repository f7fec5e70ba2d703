/**
 * Entry point of a tunnel worker thread. It starts before it knows its tunnel (the pool keeps one
 * started), loads the OpenVPN client, the stack and lwIP's WebAssembly, and waits for an 'open';
 * then it opens one TunnelEgress here and serves it to the main thread through a TunnelHost. Logs
 * go to the main thread as JSON lines, where the app's logger writes them. When the tunnel has
 * ended (or its open failed) the thread says 'idle' and waits for the next 'open': the pool reuses
 * it for the process's life. Every 'open' is answered by exactly one 'idle', after everything the
 * tunnel posted.
 */
import { parentPort } from 'node:worker_threads';
import { Writable } from 'node:stream';
import pino from 'pino';
import { BufferCollector, errorToJson, exposeGc } from '../../common/index.js';
import { compileLwip } from '../../netstack/index.js';
import { TunnelEgress } from '../tunnel-egress.js';
import type { FromTunnel, ToTunnel, TunnelWorkerData } from './messages.js';
import { TunnelHost } from './tunnel-host.js';

const port = parentPort;
if (!port) throw new Error('tunnel-worker.js runs in a worker thread');

function post(msg: FromTunnel): void {
  port!.postMessage([msg]);
}

// Compile lwIP now, while idle, not during the switch that needs this tunnel.
compileLwip();

/**
 * A full collection of this thread's heap once its tunnel has ended. An idle thread allocates
 * nothing, so V8 would never collect what the tunnel left (its objects, and its lwIP memory: a
 * WebAssembly.Memory of 32 MiB goes back only when collected) while the thread waits in the pool.
 */
const collectGarbage = exposeGc();

/** While a tunnel is served: a full collection when its dead buffers pile up (buffer-collector.ts). */
const buffers = collectGarbage ? new BufferCollector(collectGarbage) : null;

interface Run {
  opening: AbortController;
  host: TunnelHost | null;
  logger: pino.Logger | null;
}

/** The tunnel being opened (a 'close' meanwhile aborts it) or served; null while idle. */
let current: Run | null = null;

port.on('message', (batch: ToTunnel[]) => {
  if (current?.host) return current.host.handle(batch);
  for (const m of batch) {
    if (m.t === 'open' && !current) {
      const run: Run = { opening: new AbortController(), host: null, logger: null };
      current = run;
      // open() answers 'open-failed' itself; this catches only what throws before its try.
      open(m.data, run).catch((err: unknown) => {
        post({ t: 'open-failed', error: errorToJson(err) });
        becomeIdle(run);
      });
    } else if (m.t === 'close') current?.opening.abort();
  }
});

async function open(data: TunnelWorkerData, run: Run): Promise<void> {
  const logger = pino(
    { level: data.logLevel, base: undefined, timestamp: false },
    new Writable({
      write(chunk: Buffer, _enc, cb) {
        post({ t: 'log', line: chunk.toString('utf8') });
        cb();
      },
    }),
  );
  run.logger = logger;
  try {
    const { logLevel: _level, ...opts } = data;
    const tunnel = await TunnelEgress.open({ ...opts, logger, signal: run.opening.signal });
    // The host posts the tunnel's end before it calls back: 'idle' comes after all of it.
    run.host = new TunnelHost(port!, tunnel, () => becomeIdle(run));
    run.host.out.send({ t: 'opened', info: { diagnostics: tunnel.diagnostics(), dnsServers: [...tunnel.dnsServers] } });
    buffers?.start();
  } catch (err) {
    post({ t: 'open-failed', error: errorToJson(err) });
    becomeIdle(run);
  }
}

function becomeIdle(run: Run): void {
  if (current !== run) return;
  current = null;
  if (buffers) {
    buffers.stop();
    const { collections, peakBytes } = buffers.stats;
    // Said at info only when it collected: how often that happens is the figure the soak reads.
    run.logger?.[collections > 0 ? 'info' : 'debug'](
      { event: 'tunnel-thread-buffers', collections, peakMb: Math.round(peakBytes / 104857.6) / 10 },
      `tunnel thread: piled-up buffers collected ${collections} times (peak ${Math.round(peakBytes / 104857.6) / 10} MB)`,
    );
  }
  post({ t: 'idle' });
  // After the tunnel's last callbacks have run (they may hold its last references).
  if (collectGarbage) setTimeout(collectGarbage, 100).unref();
}
