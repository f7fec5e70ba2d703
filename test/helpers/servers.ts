import { createHash, randomBytes } from 'node:crypto';
import { createSocket, type Socket as DgramSocket } from 'node:dgram';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';

export interface Closeable {
  close(): Promise<void>;
}

/** Servers on 127.0.0.1 port 0, collected so afterEach can close them all. */
export class Servers {
  readonly #open: Closeable[] = [];

  track<T extends Closeable>(c: T): T {
    this.#open.push(c);
    return c;
  }

  async closeAll(): Promise<void> {
    await Promise.all(this.#open.splice(0).map((c) => c.close().catch(() => {})));
  }
}

function listen(server: Server | HttpServer, host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve((server.address() as AddressInfo).port));
  });
}

function closer(server: Server | HttpServer, sockets: Set<Socket>): () => Promise<void> {
  return () =>
    new Promise((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
}

/** A payload with a known digest, served at /blob. */
export function makeBlob(bytes: number, seed = 1): { data: Buffer; sha256: string } {
  const data = bytes <= 1 << 20 ? randomBytes(bytes) : Buffer.alloc(bytes, seed);
  return { data, sha256: createHash('sha256').update(data).digest('hex') };
}

export interface TestHttpServer extends Closeable {
  port: number;
  host: string;
  url: string;
  /** Requests seen, by path, with the raw header list the server received. */
  seen: Array<{ method: string; url: string; rawHeaders: string[] }>;
}

/**
 * /            "hello"
 * /blob        the blob
 * /echo        echoes the request body
 * /headers     the received headers as JSON
 * /ip          the caller's source address
 */
export async function startHttpServer(blob = makeBlob(256 * 1024), host = '127.0.0.1'): Promise<TestHttpServer> {
  const sockets = new Set<Socket>();
  const seen: TestHttpServer['seen'] = [];
  const server = createHttpServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', rawHeaders: req.rawHeaders });
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/blob') {
      res.writeHead(200, { 'Content-Length': blob.data.length, 'Content-Type': 'application/octet-stream' });
      res.end(blob.data);
    } else if (path === '/echo') {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => res.end(Buffer.concat(chunks)));
    } else if (path === '/headers') {
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify(req.rawHeaders));
    } else if (path === '/ip') {
      res.end(req.socket.remoteAddress);
    } else {
      res.end('hello');
    }
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  const port = await listen(server, host);
  const shown = host.includes(':') ? `[${host}]` : host;
  return { port, host, url: `http://${shown}:${port}`, seen, close: closer(server, sockets) };
}

export interface TestTcpServer extends Closeable {
  port: number;
  connections: number;
}

/** A TCP server whose per-connection behaviour the test supplies. */
export async function startTcpServer(onSocket: (s: Socket) => void, host = '127.0.0.1'): Promise<TestTcpServer> {
  const sockets = new Set<Socket>();
  const state = { connections: 0 };
  const server = createServer({ allowHalfOpen: true }, (s) => {
    state.connections++;
    sockets.add(s);
    s.on('error', () => {});
    s.once('close', () => sockets.delete(s));
    onSocket(s);
  });
  const port = await listen(server, host);
  return {
    port,
    get connections() {
      return state.connections;
    },
    close: closer(server, sockets),
  };
}

/** Echo: writes back everything, ends when the client ends. */
export function startEchoServer(host = '127.0.0.1'): Promise<TestTcpServer> {
  return startTcpServer((s) => s.pipe(s), host);
}

export interface TestUdpEcho extends Closeable {
  port: number;
}

export async function startUdpEcho(): Promise<TestUdpEcho> {
  const sock: DgramSocket = createSocket('udp4');
  sock.on('message', (msg, rinfo) => sock.send(msg, rinfo.port, rinfo.address));
  await new Promise<void>((resolve) => sock.bind(0, '127.0.0.1', () => resolve()));
  return { port: sock.address().port, close: () => new Promise((r) => sock.close(() => r())) };
}
