import { randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { dirname } from 'node:path';
import { ErrorCodes, GatehopError, makePrivateDir, type Logger } from '../common/index.js';
import type { CaptureInbound } from '../contracts/index.js';
import { Gateway } from './gateway.js';

/** The captured program's namespace: its TUN's address, and the gateway's (its route and resolver). */
export const TUN_ADDRESS = '172.23.255.1';
export const GATEWAY_ADDRESS = '172.23.255.2';
/** TUN mode's device (the host's own namespace) and its gateway: a /30 of their own. */
export const TUN_MODE_ADDRESS = '172.23.254.1';
export const TUN_MODE_GATEWAY = '172.23.254.2';
/**
 * The TUN's MTU, and the gateway stack's: big packets on a link inside this machine, so a download
 * crosses the relay in few of them (the gateway's lwIP build sends 12,000-byte segments: lwipopts.h).
 */
export const CAPTURE_MTU = 12_040;

/** A session key is good once, for this long after `gatehop run` asked for it. */
const KEY_TTL_MS = 60_000;
const MAX_PENDING_KEYS = 64;
const HELLO_MAX = 512;
const HELLO_TIMEOUT_MS = 10_000;
/** Captured programs at once. */
const MAX_SESSIONS = 64;
/** Output to one helper past this (its socket not drained) is dropped, as a full link queue drops. */
const MAX_QUEUED_BYTES = 8 * 1024 * 1024;

export interface CaptureSessionInfo {
  id: number;
  command: string;
  startedAt: number;
  connections: number;
  udpFlows: number;
}

/** What `gatehop run` gets to start its helper. */
export interface CaptureTicket {
  socketPath: string;
  key: string;
  gatewayAddress: string;
  tunAddress: string;
  mtu: number;
}

/**
 * Gatehop's end of `gatehop run`: a Unix socket (in a directory only the user can enter) that
 * helpers connect to with a one-time key the admin API handed out, then relay their TUN's packets
 * over (a 2-byte big-endian length, then one IPv4 packet, each way). One gateway per connection;
 * when the helper goes, its gateway and every flow of it close, and when Gatehop closes, every
 * helper's socket closes, so its program loses its network rather than reach the host's.
 */
export class CaptureServer {
  readonly #server: Server;
  readonly #keys = new Map<string, { command: string; until: number; hijackDns: boolean }>();
  readonly #sessions = new Map<number, { gateway: Gateway; socket: Socket; info: CaptureSessionInfo }>();
  #nextId = 1;
  #listening = false;

  constructor(private readonly o: { path: string; inbound: CaptureInbound; log: Logger }) {
    this.#server = createServer((s) => this.#accept(s));
  }

  get socketPath(): string {
    return this.o.path;
  }

  async listen(): Promise<void> {
    makePrivateDir(dirname(this.o.path));
    rmSync(this.o.path, { force: true }); // a socket file left by a Gatehop that did not exit cleanly
    await new Promise<void>((resolve, reject) => {
      const onError = (err: NodeJS.ErrnoException): void =>
        reject(
          new GatehopError(ErrorCodes.LISTEN_FAILED, `cannot listen on ${this.o.path}: ${err.message}`, { cause: err }),
        );
      this.#server.once('error', onError);
      this.#server.listen(this.o.path, () => {
        this.#server.off('error', onError);
        resolve();
      });
    });
    chmodSync(this.o.path, 0o600);
    this.#server.on('error', (err) => this.o.log.error({ err: err.message }, 'capture listener error'));
    this.#listening = true;
  }

  /**
   * A one-time key for one `gatehop run` of `command` (what the window and the log call it); with
   * `tun`, for TUN mode's device instead: its own addresses, and every DNS query answered.
   */
  ticket(command: string, o: { tun?: boolean } = {}): CaptureTicket {
    if (!this.#listening) throw new GatehopError(ErrorCodes.CAPTURE_UNAVAILABLE, 'capture is not running');
    const now = Date.now();
    for (const [k, v] of this.#keys) if (v.until <= now) this.#keys.delete(k);
    if (this.#keys.size >= MAX_PENDING_KEYS) {
      const [oldest] = this.#keys.keys();
      this.#keys.delete(oldest!);
    }
    const key = randomBytes(32).toString('hex');
    this.#keys.set(key, { command: command.slice(0, 200), until: now + KEY_TTL_MS, hijackDns: o.tun === true });
    return o.tun
      ? {
          socketPath: this.o.path,
          key,
          gatewayAddress: TUN_MODE_GATEWAY,
          tunAddress: TUN_MODE_ADDRESS,
          mtu: CAPTURE_MTU,
        }
      : { socketPath: this.o.path, key, gatewayAddress: GATEWAY_ADDRESS, tunAddress: TUN_ADDRESS, mtu: CAPTURE_MTU };
  }

  get sessions(): CaptureSessionInfo[] {
    return [...this.#sessions.values()].map(({ gateway, info }) => ({
      ...info,
      connections: gateway.connections,
      udpFlows: gateway.udpFlows,
    }));
  }

  #takeKey(key: string): { command: string; hijackDns: boolean } | null {
    const given = Buffer.from(key);
    for (const [k, v] of this.#keys) {
      const want = Buffer.from(k);
      if (want.length === given.length && timingSafeEqual(want, given)) {
        this.#keys.delete(k);
        return v.until > Date.now() ? v : null;
      }
    }
    return null;
  }

  #accept(socket: Socket): void {
    socket.on('error', () => {}); // the session's close handles it
    let hello = Buffer.alloc(0);
    const timer = setTimeout(() => socket.destroy(), HELLO_TIMEOUT_MS);
    timer.unref();
    const onHello = (chunk: Buffer): void => {
      hello = Buffer.concat([hello, chunk]);
      const nl = hello.indexOf(0x0a);
      if (nl < 0) {
        if (hello.length > HELLO_MAX) socket.destroy();
        return;
      }
      socket.off('data', onHello);
      clearTimeout(timer);
      const rest = hello.subarray(nl + 1);
      const m = /^GATEHOP-CAPTURE 1 ([0-9a-f]{64})$/.exec(hello.subarray(0, nl).toString('latin1'));
      const granted = m ? this.#takeKey(m[1]!) : null;
      if (!granted) {
        socket.end('ERR the session key is unknown or expired: start the program with `gatehop run` again\n');
        return;
      }
      if (this.#sessions.size >= MAX_SESSIONS) {
        socket.end(`ERR ${MAX_SESSIONS} programs are captured already\n`);
        return;
      }
      socket.write('OK\n');
      this.#start(socket, granted, rest);
    };
    socket.on('data', onHello);
  }

  #start(socket: Socket, granted: { command: string; hijackDns: boolean }, first: Buffer): void {
    const { command } = granted;
    const id = this.#nextId++;
    const log = this.o.log.child({ captureId: id });
    let dropped = 0;
    // A turn's packets leave as one buffer of frames, in one write, when the turn ends.
    let batch: Buffer[] = [];
    let batchBytes = 0;
    const flush = (): void => {
      const packets = batch;
      batch = [];
      const frames = Buffer.allocUnsafe(batchBytes);
      batchBytes = 0;
      let at = 0;
      for (const p of packets) {
        frames.writeUInt16BE(p.length, at);
        p.copy(frames, at + 2);
        at += 2 + p.length;
      }
      if (!socket.destroyed) socket.write(frames);
    };
    const gateway = new Gateway({
      inbound: this.o.inbound,
      address: granted.hijackDns ? TUN_MODE_GATEWAY : GATEWAY_ADDRESS,
      hijackDns: granted.hijackDns,
      mtu: CAPTURE_MTU,
      log,
      output: (packet) => {
        if (socket.destroyed) return;
        if (socket.writableLength > MAX_QUEUED_BYTES) {
          dropped++;
          return;
        }
        if (batch.length === 0) setImmediate(flush);
        batch.push(packet);
        batchBytes += 2 + packet.length;
      },
    });
    const info: CaptureSessionInfo = { id, command, startedAt: Date.now(), connections: 0, udpFlows: 0 };
    this.#sessions.set(id, { gateway, socket, info });
    log.info({ event: 'capture-started', command }, 'a program is captured (gatehop run)');
    let buf: Buffer = first;
    const onData = (chunk: Buffer): void => {
      buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
      let at = 0;
      while (buf.length - at >= 2) {
        const len = buf.readUInt16BE(at);
        if (buf.length - at < 2 + len) break;
        if (len > 0) gateway.input(buf.subarray(at + 2, at + 2 + len));
        at += 2 + len;
      }
      buf = at === buf.length ? Buffer.alloc(0) : buf.subarray(at);
    };
    socket.on('data', onData);
    socket.once('close', () => {
      gateway.close();
      this.#sessions.delete(id);
      log.info(
        {
          event: 'capture-ended',
          command,
          durationMs: Date.now() - info.startedAt,
          ...gateway.stats,
          outputDropped: dropped,
        },
        'a captured program ended',
      );
    });
    if (first.length > 0) onData(Buffer.alloc(0));
  }

  /** Ends every captured program's session (their TUNs close: no network) and stops listening. */
  async close(): Promise<void> {
    for (const { socket } of this.#sessions.values()) socket.destroy();
    this.#keys.clear();
    if (!this.#listening) return;
    this.#listening = false;
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
    rmSync(this.o.path, { force: true });
  }
}
