/**
 * Entry point of a tunnel's worker thread. It starts before it knows its tunnel (a pool keeps one
 * started), loads the OpenVPN client, the stack and lwIP's WebAssembly, and waits for an 'open';
 * then it opens one TunnelEgress here and serves it to the main thread through a TunnelHost. Logs
 * go to the main thread as JSON lines, where the app's logger writes them. The thread ends when its
 * tunnel does.
 */
import { parentPort } from 'node:worker_threads';
import { Writable } from 'node:stream';
import pino, { type LevelWithSilent } from 'pino';
import { errorToJson } from '../../common/index.js';
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

// A 'close' that arrives while the tunnel is still opening aborts the open.
const opening = new AbortController();
let host: TunnelHost | null = null;
let started = false;
port.on('message', (batch: ToTunnel[]) => {
  if (host) return host.handle(batch);
  for (const m of batch) {
    if (m.t === 'open' && !started) {
      started = true;
      void open(m.data);
    } else if (m.t === 'close') {
      opening.abort();
      if (!started) port.unref();
    }
  }
});

async function open(data: TunnelWorkerData): Promise<void> {
  const logger = pino(
    { level: data.logLevel, base: undefined, timestamp: false },
    new Writable({
      write(chunk: Buffer, _enc, cb) {
        post({ t: 'log', line: chunk.toString('utf8') });
        cb();
      },
    }),
  );
  try {
    const { logLevel: _level, ...opts } = data;
    const tunnel = await TunnelEgress.open({ ...opts, logger, signal: opening.signal });
    // Unref, not close: what the host posted last (the tunnel's end) must still arrive.
    host = new TunnelHost(port!, tunnel, () => port!.unref());
    host.out.send({ t: 'opened', info: { diagnostics: tunnel.diagnostics() } });
  } catch (err) {
    post({ t: 'open-failed', error: errorToJson(err) });
    port!.unref();
  }
}
