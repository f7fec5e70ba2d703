import { EventEmitter } from 'node:events';
import { randomInt } from 'node:crypto';
import type { TLSSocket } from 'node:tls';
import { ErrorCodes, GatehopError, isGatehopError, type Logger } from '../common/index.js';
import { BlockReader, encodeBlocks, encodeKeepAlive, MAX_FRAME } from './blocks.js';
import type { LaneDirection, SeAdditionalConnection, SeConnection, Welcome } from './se-dial.js';

/** Frames kept for the first listener at most (see #early). */
const MAX_EARLY_FRAMES = 256;
/** What may wait unsent in one connection before frames are dropped (a node that stopped reading). */
const MAX_BACKLOG = 4 * 1024 * 1024;
/** Frames written in one turn of the event loop go out as one send (one TLS record when they fit). */
const MAX_FRAMES_PER_SEND = 64;
/**
 * Sends stay on one connection until its unsent bytes pass this and another has less: frames of
 * one TCP flow spread over connections arrive out of order, which the far end's TCP reads as loss.
 */
const LANE_SWITCH_BACKLOG = 64 * 1024;
/**
 * A lost or failed additional connection is joined again after this, doubling to
 * JOIN_RETRY_MAX_MS. The wait matters: SoftEther's server ends the whole session when one of its
 * connections is reset (seen with 5.01 on the rig: the others are closed within milliseconds), and
 * a join in that moment is accepted and closed at once; waiting lets the session be found lost.
 */
const JOIN_RETRY_MS = 2_000;
const JOIN_RETRY_MAX_MS = 60_000;
/** An additional connection lost sooner than this after it joined counts as a failed join. */
const LANE_MIN_LIFE_MS = 10_000;

export interface SeSessionStats {
  framesIn: number;
  framesOut: number;
  bytesIn: number;
  bytesOut: number;
  droppedOut: number;
  keepAlivesIn: number;
  keepAlivesOut: number;
  oversizedIn: number;
  /** Additional connections joined, and the attempts that failed. */
  joined: number;
  joinFailures: number;
}

export interface SeSessionOptions {
  /** TCP connections wanted in all (the Welcome's max_connection caps it); default 1. */
  connections?: number;
  /** Dials one additional connection (se-dial's dialSeVpnAdditional), aborted when the session closes. */
  join?: (signal: AbortSignal) => Promise<SeAdditionalConnection>;
}

/** One TCP connection of the session: its own block stream, silence clock and keep-alives. */
interface Lane {
  tls: TLSSocket;
  direction: LaneDirection;
  joinedAt: number;
  reader: BlockReader;
  lastRecv: number;
  nextKeepAlive: number;
  /** When nextKeepAlive was last drawn: data pushes it back at most once a second (the timer's step). */
  keepAliveDrawnAt: number;
}

/**
 * An established SE-VPN session: Ethernet frames both ways in SoftEther's blocks over one or more
 * TCP connections (SoftEther's "additional connections"). Each connection sends keep-alives at a
 * random interval in [timeout/5, timeout/2] of the Welcome's timeout (pushed back by data, as
 * SoftEther's client does) and is dropped after a timeout of silence, as the server drops it; the
 * session is lost when its last connection is. Lost additional connections are joined again.
 * Emits 'frames' (in order per connection) and, once, 'down' with the reason.
 */
export class SeSession extends EventEmitter<{ frames: [Buffer[]]; down: [GatehopError] }> {
  readonly welcome: Welcome;
  readonly stats: SeSessionStats = {
    framesIn: 0,
    framesOut: 0,
    bytesIn: 0,
    bytesOut: 0,
    droppedOut: 0,
    keepAlivesIn: 0,
    keepAlivesOut: 0,
    oversizedIn: 0,
    joined: 0,
    joinFailures: 0,
  };
  readonly #log: Logger;
  readonly #lanes: Lane[] = [];
  /** The lane sends stay on (see LANE_SWITCH_BACKLOG). */
  #current: Lane | null = null;
  readonly #wanted: number;
  readonly #join: SeSessionOptions['join'];
  readonly #aborter = new AbortController();
  #joining = false;
  #joinRetryMs = JOIN_RETRY_MS;
  #nextJoinAt = 0;
  #outbox: Buffer[] = [];
  #flushScheduled = false;
  #timer: NodeJS.Timeout;
  #closed = false;
  /**
   * Frames read before anyone listens (those that came with the Welcome: the hub's first ARP or
   * DHCP answer), handed over when the first 'frames' listener is added. Dropped, they cost a
   * DHCP timeout. Bounded: a hub that floods before we listen loses the rest.
   */
  #early: Buffer[] | null = [];

  constructor(conn: SeConnection, logger: Logger, o: SeSessionOptions = {}) {
    super();
    this.welcome = conn.welcome;
    this.#log = logger.child({ component: 'softether', session: conn.welcome.sessionName });
    this.#wanted = Math.max(1, Math.min(conn.welcome.maxConnection, o.connections ?? 1));
    this.#join = o.join;
    // One timer for every duty: a second is fine against timeouts of tens of seconds.
    this.#timer = setInterval(() => this.#tick(), 1000);
    this.#timer.unref();
    this.#addLane(conn.tls, 'both', conn.rest);
    this.#maybeJoin();
  }

  /**
   * Listens for frames; the first listener also gets, at once, those read before it (the frames
   * that came with the Welcome).
   */
  onFrames(fn: (frames: Buffer[]) => void): void {
    this.on('frames', fn);
    const early = this.#early;
    this.#early = null;
    if (early && early.length > 0 && !this.#closed) this.emit('frames', early);
  }

  /** When the last bytes (frames or keep-alives) came from the server, on any connection. */
  get lastReceivedAt(): number {
    return Math.max(0, ...this.#lanes.map((l) => l.lastRecv));
  }

  /** TCP connections carrying the session now, and how many it aims for. */
  get connections(): { open: number; wanted: number } {
    return { open: this.#lanes.length, wanted: this.#wanted };
  }

  /** Queues Ethernet frames; those of one turn go out together. False when the session is down. */
  send(frames: readonly Buffer[]): boolean {
    if (this.#closed) return false;
    for (const f of frames) {
      if (f.length === 0 || f.length > MAX_FRAME) {
        this.stats.droppedOut++;
        continue;
      }
      this.#outbox.push(f);
    }
    if (!this.#flushScheduled && this.#outbox.length > 0) {
      this.#flushScheduled = true;
      queueMicrotask(() => this.#flush());
    }
    return true;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#timer);
    this.#aborter.abort();
    this.#outbox = [];
    for (const lane of this.#lanes.splice(0)) closeTls(lane.tls);
    this.#current = null;
  }

  #addLane(tls: TLSSocket, direction: LaneDirection, rest: Buffer): void {
    const now = Date.now();
    const lane: Lane = {
      tls,
      direction,
      joinedAt: now,
      reader: new BlockReader(),
      lastRecv: now,
      nextKeepAlive: 0,
      keepAliveDrawnAt: 0,
    };
    this.#scheduleKeepAlive(lane);
    this.#lanes.push(lane);
    tls.on('data', (chunk: Buffer) => this.#onData(lane, chunk));
    tls.on('error', (err: Error) =>
      this.#laneLost(
        lane,
        new GatehopError(ErrorCodes.EGRESS_FAILED, `SE-VPN connection: ${err.message}`, { cause: err }),
      ),
    );
    tls.on('close', () =>
      this.#laneLost(lane, new GatehopError(ErrorCodes.EGRESS_CLOSED, 'SE-VPN connection closed by the server')),
    );
    if (rest.length) this.#onData(lane, rest);
    tls.resume();
  }

  #laneLost(lane: Lane, err: GatehopError): void {
    const i = this.#lanes.indexOf(lane);
    if (this.#closed || i < 0) return;
    this.#lanes.splice(i, 1);
    if (this.#current === lane) this.#current = null;
    closeTls(lane.tls);
    if (!this.#lanes.some((l) => l.direction !== 'down') || !this.#lanes.some((l) => l.direction !== 'up')) {
      this.#fail(err);
      return;
    }
    this.#log.info(
      { event: 'softether-connection-lost', err: err.message, open: this.#lanes.length },
      'an SE-VPN connection was lost; the session goes on',
    );
    if (Date.now() - lane.joinedAt < LANE_MIN_LIFE_MS) this.#joinFailed();
    else {
      // It had worked: start the backoff afresh, but still wait to see whether the session lives.
      this.#joinRetryMs = JOIN_RETRY_MS;
      this.#nextJoinAt = Date.now() + JOIN_RETRY_MS;
    }
  }

  #joinFailed(): void {
    this.stats.joinFailures++;
    this.#nextJoinAt = Date.now() + this.#joinRetryMs;
    this.#joinRetryMs = Math.min(JOIN_RETRY_MAX_MS, this.#joinRetryMs * 2);
  }

  /** Joins additional connections, one at a time, until the session has what it wants. */
  #maybeJoin(): void {
    if (this.#closed || this.#joining || !this.#join || this.#lanes.length >= this.#wanted) return;
    if (Date.now() < this.#nextJoinAt) return;
    this.#joining = true;
    this.#join(this.#aborter.signal).then(
      (c) => {
        this.#joining = false;
        if (this.#closed || this.#lanes.length >= this.#wanted) {
          closeTls(c.tls);
          return;
        }
        this.stats.joined++;
        this.#addLane(c.tls, c.direction, c.rest);
        this.#maybeJoin();
      },
      (err: unknown) => {
        this.#joining = false;
        if (this.#closed) return;
        this.#joinFailed();
        this.#log.info(
          { event: 'softether-join-failed', err: (err as Error).message, open: this.#lanes.length },
          'an additional SE-VPN connection failed; the session goes on with fewer',
        );
      },
    );
  }

  /** The lane to send on: the current one unless it is backed up and another has less waiting. */
  #sendLane(): Lane | null {
    const cur = this.#current;
    if (cur && cur.tls.writableLength <= LANE_SWITCH_BACKLOG) return cur;
    let best: Lane | null = null;
    for (const l of this.#lanes) {
      if (l.direction === 'down') continue;
      if (!best || l.tls.writableLength < best.tls.writableLength) best = l;
    }
    this.#current = best;
    return best;
  }

  #flush(): void {
    this.#flushScheduled = false;
    const batch = this.#outbox;
    this.#outbox = [];
    if (this.#closed || batch.length === 0) return;
    const lane = this.#sendLane();
    if (!lane || lane.tls.writableLength > MAX_BACKLOG) {
      this.stats.droppedOut += batch.length;
      return;
    }
    for (let i = 0; i < batch.length; i += MAX_FRAMES_PER_SEND) {
      const part = batch.slice(i, i + MAX_FRAMES_PER_SEND);
      const wire = encodeBlocks(part);
      lane.tls.write(wire);
      this.stats.framesOut += part.length;
      this.stats.bytesOut += wire.length;
    }
    // Data pushes the keep-alive back; drawn anew at most once a second, as the timer checks it so.
    if (Date.now() - lane.keepAliveDrawnAt >= 1000) this.#scheduleKeepAlive(lane);
  }

  #onData(lane: Lane, chunk: Buffer): void {
    if (this.#closed) return;
    lane.lastRecv = Date.now();
    this.stats.bytesIn += chunk.length;
    let frames: Buffer[];
    const before = { k: lane.reader.keepAlives, o: lane.reader.oversized };
    try {
      frames = lane.reader.push(chunk);
    } catch (err) {
      // A connection that breaks the framing is one the session cannot trust: end it all.
      this.#fail(isGatehopError(err) ? err : new GatehopError(ErrorCodes.SOFTETHER_PROTOCOL, (err as Error).message));
      return;
    }
    this.stats.keepAlivesIn += lane.reader.keepAlives - before.k;
    this.stats.oversizedIn += lane.reader.oversized - before.o;
    if (frames.length === 0) return;
    this.stats.framesIn += frames.length;
    if (this.#early !== null) {
      // Nobody listens yet: kept (copied: they may be views into this read) for the first listener.
      if (this.#early.length < MAX_EARLY_FRAMES) this.#early.push(...frames.map((f) => Buffer.from(f)));
      return;
    }
    this.emit('frames', frames);
  }

  #scheduleKeepAlive(lane: Lane): void {
    const t = this.welcome.timeoutMs;
    lane.keepAliveDrawnAt = Date.now();
    lane.nextKeepAlive = lane.keepAliveDrawnAt + randomInt(Math.floor(t / 5), Math.floor(t / 2) + 1);
  }

  #tick(): void {
    const now = Date.now();
    for (const lane of [...this.#lanes]) {
      if (now - lane.lastRecv > this.welcome.timeoutMs) {
        this.#laneLost(
          lane,
          new GatehopError(
            ErrorCodes.EGRESS_HOST_UNREACHABLE,
            `nothing from the SE-VPN server for ${Math.round(this.welcome.timeoutMs / 1000)} s`,
          ),
        );
        if (this.#closed) return;
        continue;
      }
      // Every connection the server reads from must hear from us within its timeout, or it is dropped.
      if (lane.direction !== 'down' && now >= lane.nextKeepAlive && lane.tls.writableLength <= MAX_BACKLOG) {
        lane.tls.write(encodeKeepAlive());
        this.stats.keepAlivesOut++;
        this.#scheduleKeepAlive(lane);
      }
    }
    this.#maybeJoin();
  }

  #fail(err: GatehopError): void {
    if (this.#closed) return;
    this.#log.info({ event: 'softether-down', err: err.message }, 'SE-VPN session down');
    this.close();
    this.emit('down', err);
  }
}

function closeTls(tls: TLSSocket): void {
  tls.removeAllListeners('data');
  tls.removeAllListeners('close');
  tls.on('error', () => {});
  tls.end();
  tls.destroy();
}
