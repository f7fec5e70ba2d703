import { connect, type Socket } from 'node:net';
import { once } from 'node:events';

/** A raw TCP client that collects what it receives, for byte-level protocol tests. */
export class RawClient {
  readonly socket: Socket;
  #received = Buffer.alloc(0);
  #waiters: Array<() => void> = [];
  ended = false;
  closed = false;

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.on('data', (c: Buffer) => {
      this.#received = Buffer.concat([this.#received, c]);
      this.#wake();
    });
    socket.on('end', () => {
      this.ended = true;
      this.#wake();
    });
    socket.on('close', () => {
      this.closed = true;
      this.#wake();
    });
    socket.on('error', () => {});
  }

  static async open(port: number, host = '127.0.0.1'): Promise<RawClient> {
    const socket = connect({ port, host, allowHalfOpen: true });
    await once(socket, 'connect');
    return new RawClient(socket);
  }

  #wake(): void {
    for (const w of this.#waiters.splice(0)) w();
  }

  get received(): Buffer {
    return this.#received;
  }

  write(bytes: Buffer | number[] | string): void {
    this.socket.write(typeof bytes === 'string' ? bytes : Buffer.from(bytes));
  }

  /** Resolves with exactly n bytes (consumed), or rejects when the peer ends first. */
  async read(n: number, timeoutMs = 5_000): Promise<Buffer> {
    const deadline = Date.now() + timeoutMs;
    while (this.#received.length < n) {
      if (this.ended || this.closed) throw new Error(`peer ended after ${this.#received.length} of ${n} bytes`);
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${n} bytes`);
      await new Promise<void>((r) => {
        this.#waiters.push(r);
        setTimeout(r, 50).unref();
      });
    }
    const out = this.#received.subarray(0, n);
    this.#received = this.#received.subarray(n);
    return out;
  }

  /** Waits until the peer ends or closes the connection. */
  async waitEnd(timeoutMs = 5_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.ended && !this.closed) {
      if (Date.now() > deadline) throw new Error('peer did not close');
      await new Promise<void>((r) => {
        this.#waiters.push(r);
        setTimeout(r, 50).unref();
      });
    }
  }

  destroy(): void {
    this.socket.destroy();
  }
}

/** SOCKS5 CONNECT request bytes for an IPv4, IPv6 or domain target. */
export function connectRequest(host: string, port: number, command = 0x01): Buffer {
  const p = Buffer.from([port >> 8, port & 0xff]);
  if (/^\d+\.\d+\.\d+\.\d+$/.test(host)) {
    return Buffer.concat([Buffer.from([5, command, 0, 1, ...host.split('.').map(Number)]), p]);
  }
  if (host === '::1') {
    return Buffer.concat([Buffer.from([5, command, 0, 4]), Buffer.alloc(15), Buffer.from([1]), p]);
  }
  const name = Buffer.from(host);
  return Buffer.concat([Buffer.from([5, command, 0, 3, name.length]), name, p]);
}

/** Greets with NO_AUTH and sends a CONNECT; returns the client and the 10-byte reply. */
export async function socksConnect(
  proxyPort: number,
  host: string,
  port: number,
): Promise<{ client: RawClient; reply: Buffer }> {
  const client = await RawClient.open(proxyPort);
  client.write([5, 1, 0]);
  const method = await client.read(2);
  if (method[1] !== 0) throw new Error(`method ${method[1]}`);
  client.write(connectRequest(host, port));
  const head = await client.read(4);
  const rest = head[3] === 4 ? 18 : 6;
  const tail = await client.read(rest);
  return { client, reply: Buffer.concat([head, tail]) };
}
