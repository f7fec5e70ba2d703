import type { Duplex } from 'node:stream';
import { errorToJson, threadTransferCollector } from '../../common/index.js';
import type { EgressTcpConnection, EgressUdpSocket } from '../../contracts/index.js';
import type { TunnelDiagnostics } from '../tunnel-types.js';
import {
  ACK_EVERY_BYTES,
  STREAM_WINDOW_BYTES,
  type FromTunnel,
  type HostedStreamState,
  type ToTunnel,
} from './messages.js';
import { Outbox, ownedBuffer, type PostTarget } from './outbox.js';

/** What the host serves: a TunnelEgress (or, in unit tests, anything shaped like one). */
export interface HostedTunnel {
  connectTcp(
    host: string,
    port: number,
    opts: { timeoutMs: number; signal: AbortSignal },
  ): Promise<EgressTcpConnection>;
  bindUdp(): Promise<EgressUdpSocket>;
  resolve(host: string): Promise<string[]>;
  measureDns(): Promise<number>;
  diagnostics(): TunnelDiagnostics;
  onLiveness(fn: (responsive: boolean, quietMs: number) => void): () => void;
  onClose(fn: (reason: string) => void): () => void;
  close(): Promise<void>;
}

const HEARTBEAT_MS = 500;

/** One hosted TCP stream: the tunnel's side of the boundary, with both windows. */
class HostedStream {
  /** Bytes sent to the main thread and not yet acknowledged. */
  #inFlight = 0;
  /** Bytes the main thread sent that are not acknowledged yet. */
  #unacked = 0;
  #closed = false;

  constructor(
    readonly id: number,
    readonly stream: Duplex,
    readonly out: Outbox<FromTunnel>,
    onGone: () => void,
  ) {
    stream.on('data', (chunk: Buffer) => {
      this.#inFlight += chunk.length;
      out.sendData(id, chunk);
      // The main thread's consumer is behind: stop reading, so lwIP's window closes on the server.
      if (this.#inFlight >= STREAM_WINDOW_BYTES) stream.pause();
    });
    stream.on('end', () => out.send({ t: 'fin', id }));
    stream.on('drain', () => this.#ackWritten());
    stream.on('error', () => {}); // reported with 'close'
    stream.on('close', () => {
      this.#closed = true;
      const err = stream.errored;
      out.send({ t: 'closed', id, error: err ? errorToJson(err) : null });
      onGone();
    });
  }

  /** The main thread took `bytes` of what we sent. */
  acked(bytes: number): void {
    this.#inFlight -= bytes;
    if (this.#inFlight < STREAM_WINDOW_BYTES && this.stream.isPaused() && !this.#closed) this.stream.resume();
  }

  write(data: ArrayBuffer): void {
    if (this.#closed) return;
    const buf = Buffer.from(data);
    this.#unacked += buf.length;
    // Acknowledged per 64 KiB the stream took, or all at its 'drain'; while the stream says wait,
    // the main thread's window fills and the client socket pauses there.
    if (this.stream.write(buf) && this.#unacked >= ACK_EVERY_BYTES) this.#ackWritten();
  }

  state(): HostedStreamState {
    const s = this.stream as Duplex & { info?: () => unknown; stats?: unknown };
    return {
      id: this.id,
      inFlight: this.#inFlight,
      unacked: this.#unacked,
      paused: s.isPaused(),
      readableLength: s.readableLength,
      writableLength: s.writableLength,
      tcp: { info: s.info?.() ?? null, stats: s.stats ?? null },
    };
  }

  #ackWritten(): void {
    if (this.#unacked === 0) return;
    this.out.send({ t: 'ack', id: this.id, bytes: this.#unacked });
    this.#unacked = 0;
  }
}

/**
 * The tunnel worker's side of the thread boundary: runs what the main thread asks of the tunnel
 * and reports back (stream data with flow control, UDP, DNS, liveness, a heartbeat with counters).
 * It knows nothing of workers, only a port, so unit tests run it over a MessageChannel.
 */
export class TunnelHost {
  readonly out: Outbox<FromTunnel>;
  readonly #tunnel: HostedTunnel;
  readonly #streams = new Map<number, HostedStream>();
  readonly #connecting = new Map<number, AbortController>();
  readonly #udp = new Map<number, EgressUdpSocket>();
  /** Sockets still binding: what the main thread sent meanwhile (it does not wait for the bind). */
  readonly #udpPending = new Map<number, Array<(s: EgressUdpSocket) => void>>();
  readonly #heartbeat: NodeJS.Timeout;
  readonly #onClosed: () => void;
  #closed = false;

  constructor(target: PostTarget, tunnel: HostedTunnel, onClosed: () => void) {
    this.out = new Outbox<FromTunnel>(target, (id, data) => ({ t: 'data', id, data }), { giveAway: true });
    this.#tunnel = tunnel;
    this.#onClosed = onClosed;
    tunnel.onLiveness((responsive, quietMs) => this.out.send({ t: 'liveness', responsive, quietMs }));
    tunnel.onClose((reason) => {
      if (reason !== 'closed') this.out.send({ t: 'down', reason });
      this.#finish();
    });
    // The heartbeat also tells the main thread this thread is not stuck.
    this.#heartbeat = setInterval(
      () => this.out.send({ t: 'heartbeat', diagnostics: tunnel.diagnostics() }),
      HEARTBEAT_MS,
    );
  }

  handle(batch: readonly ToTunnel[]): void {
    for (const m of batch) this.#handleOne(m);
  }

  #handleOne(m: ToTunnel): void {
    switch (m.t) {
      case 'data':
        threadTransferCollector().received(m.data.byteLength); // a client's upload, the main thread's buffer
        this.#streams.get(m.id)?.write(m.data);
        return;
      case 'ack':
        this.#streams.get(m.id)?.acked(m.bytes);
        return;
      case 'end':
        this.#streams.get(m.id)?.stream.end();
        return;
      case 'destroy': {
        this.#connecting.get(m.id)?.abort();
        this.#streams.get(m.id)?.stream.destroy();
        return;
      }
      case 'connect':
        // #connect answers 'connect-failed' for every failure it meets.
        this.#report('tunnel-connect', this.#connect(m.id, m.host, m.port, m.timeoutMs));
        return;
      case 'abort':
        this.#connecting.get(m.id)?.abort();
        return;
      case 'resolve':
        this.#answer(m.req, this.#tunnel.resolve(m.host));
        return;
      case 'measure-dns':
        this.#answer(m.req, this.#tunnel.measureDns());
        return;
      case 'inspect-streams':
        this.#answer(m.req, Promise.resolve([...this.#streams.values()].map((h) => h.state())));
        return;
      case 'udp-open':
        this.#report('tunnel-udp-open', this.#openUdp(m.id));
        return;
      case 'udp-send':
        return this.#withUdp(m.id, (s) => s.send(Buffer.from(m.data), m.address, m.port));
      case 'udp-close':
        return this.#withUdp(m.id, (s) => s.close());
      case 'close':
        this.#report('tunnel-close', this.#tunnel.close());
        return;
      case 'open':
        return; // handled by the worker entry before the host exists
    }
  }

  /** Work nobody awaits: a rejection becomes an error line in the app's log, with its code. */
  #report(event: string, work: Promise<unknown>): void {
    work.catch((err: unknown) => {
      const { code, message } = errorToJson(err);
      // pino's numeric level 50 (error), as the worker's own log lines carry it.
      this.out.send({
        t: 'log',
        line: JSON.stringify({ level: 50, event, errCode: code, err: message, msg: `${event} failed` }),
      });
    });
  }

  async #connect(id: number, host: string, port: number, timeoutMs: number): Promise<void> {
    const ac = new AbortController();
    this.#connecting.set(id, ac);
    try {
      const c = await this.#tunnel.connectTcp(host, port, { timeoutMs, signal: ac.signal });
      if (ac.signal.aborted || this.#closed) {
        c.stream.destroy();
        return;
      }
      this.#streams.set(id, new HostedStream(id, c.stream, this.out, () => this.#streams.delete(id)));
      this.out.send({
        t: 'connected',
        id,
        localAddress: c.localAddress,
        localPort: c.localPort,
        remoteAddress: c.remoteAddress,
        remotePort: c.remotePort,
      });
    } catch (err) {
      this.out.send({ t: 'connect-failed', id, error: errorToJson(err) });
    } finally {
      this.#connecting.delete(id);
    }
  }

  #withUdp(id: number, fn: (s: EgressUdpSocket) => void): void {
    const s = this.#udp.get(id);
    if (s) fn(s);
    else this.#udpPending.get(id)?.push(fn);
  }

  async #openUdp(id: number): Promise<void> {
    this.#udpPending.set(id, []);
    try {
      const s = await this.#tunnel.bindUdp();
      const pending = this.#udpPending.get(id) ?? [];
      this.#udpPending.delete(id);
      this.#udp.set(id, s);
      s.onMessage((d) => {
        const data = ownedBuffer([d.data], d.data.length, true);
        this.out.send({ t: 'udp-message', id, data, address: d.address, port: d.port }, data);
      });
      s.onClose(() => {
        this.#udp.delete(id);
        this.out.send({ t: 'udp-closed', id });
      });
      for (const fn of pending) fn(s);
    } catch {
      this.#udpPending.delete(id);
      this.out.send({ t: 'udp-closed', id });
    }
  }

  #answer(req: number, p: Promise<unknown>): void {
    p.then(
      (value) => this.out.send({ t: 'result', req, value, error: null }),
      (err: unknown) => this.out.send({ t: 'result', req, value: null, error: errorToJson(err) }),
    );
  }

  /** The tunnel is gone: what it carried has closed; the worker may exit once this is posted. */
  #finish(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#heartbeat);
    for (const ac of this.#connecting.values()) ac.abort();
    for (const s of this.#udp.values()) s.close();
    // The stack closed its streams; their 'close' events are queued behind this.
    setImmediate(() => {
      this.out.flush();
      // Nothing of this tunnel may follow: the thread's next tunnel starts after the callback.
      this.out.close();
      this.#onClosed();
    });
  }
}
