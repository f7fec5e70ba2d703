import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { checkAccess, type AccessPolicy } from './access.js';
import type { AdminCore } from './admin-core.js';
import { subscribeClashLogs, trafficMeter } from './clash-streams.js';
import { connectionsView } from './views.js';

/** A dashboard that falls this far behind is dropped rather than buffered for. */
const MAX_BUFFERED = 1 << 20;
/**
 * The WebSocket forms of the Clash streams that newer dashboards (metacubexd, zashboard) open
 * instead of HTTP streams: /traffic and /memory once a second, /connections every `interval` ms
 * (default 1000), /logs as lines arrive at or above `level` (default info). Same token (`?token=`,
 * since browsers cannot set headers on a WebSocket), Host and Origin rules as every other route.
 */
export class ClashWebSockets {
  readonly #wss = new WebSocketServer({ noServer: true, maxPayload: 4 * 1024, perMessageDeflate: false });
  readonly #routes: Record<string, (ws: WebSocket, url: URL) => () => void> = {
    '/traffic': (ws) => this.#every(ws, 1_000, trafficMeter(this.core)),
    '/memory': (ws) => this.#every(ws, 1_000, () => ({ inuse: process.memoryUsage().rss, oslimit: 0 })),
    '/connections': (ws, url) =>
      this.#every(ws, Math.max(200, Number(url.searchParams.get('interval')) || 1_000), () =>
        connectionsView(this.core),
      ),
    '/logs': (ws, url) => subscribeClashLogs(this.core, url.searchParams.get('level'), (line) => this.#send(ws, line)),
  };
  dropped = 0;

  constructor(
    private readonly core: AdminCore,
    private readonly policy: () => AccessPolicy | null,
  ) {}

  get clients(): number {
    return this.#wss.clients.size;
  }

  /** The http server's 'upgrade' handler: refuses with a plain HTTP status, or opens the stream. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => socket.destroy());
    const refuse = (status: number, text: string): void => {
      socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    };
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://admin.invalid');
    } catch {
      return refuse(400, 'Bad Request');
    }
    const policy = this.policy();
    if (!policy) return refuse(503, 'Service Unavailable');
    const verdict = checkAccess(req.headers, url, policy);
    if (!verdict.ok) return refuse(verdict.status, verdict.status === 401 ? 'Unauthorized' : 'Forbidden');
    const route = this.#routes[url.pathname];
    if (!route) return refuse(404, 'Not Found');
    this.#wss.handleUpgrade(req, socket, head, (ws) => {
      ws.on('error', () => ws.terminate());
      ws.on('message', () => {}); // dashboards send nothing that matters
      const stop = route(ws, url);
      ws.once('close', stop);
    });
  }

  close(): void {
    for (const ws of this.#wss.clients) ws.terminate();
    this.#wss.close();
  }

  /** Sends unless the client has stopped reading, in which case it is dropped. */
  #send(ws: WebSocket, value: unknown): void {
    if (ws.readyState !== ws.OPEN) return;
    if (ws.bufferedAmount > MAX_BUFFERED) {
      this.dropped++;
      ws.terminate();
      return;
    }
    ws.send(JSON.stringify(value));
  }

  #every(ws: WebSocket, ms: number, make: () => unknown): () => void {
    this.#send(ws, make());
    const timer = setInterval(() => this.#send(ws, make()), ms);
    return () => clearInterval(timer);
  }
}
