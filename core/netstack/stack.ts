import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { ErrorCodes, GatehopError, settleFirst } from '../common/index.js';
import { ipv4ToWasm } from './ipv4.js';
import { LwipErr, lwipErrName } from './lwip-errors.js';
import { LwipMemory } from './lwip-memory.js';
import { dispatchStackEvent, forEachCoalesced, type DispatchTargets } from './stack-events.js';
import { connectRefusal } from './connect-refusal.js';
import { decodeStats, STATS_WORDS } from './stack-stats.js';
import { LeaseKeeper } from './stack-lease.js';
import type { ConnectOptions, StackEvent, StackLease, StackOptions, StackStats } from './stack-types.js';
import { tcpPcbOps, type PcbHost } from './tcp-ops.js';
import { udpPcbOps } from './udp-ops.js';
import { TcpStream } from './tcp-stream.js';
import { StackUdpSocket } from './udp-socket.js';
import type { LwipExports } from './wasm-module.js';
import { startLwip } from './lwip-start.js';

export type { ConnectOptions, StackLease, StackOptions, StackStats } from './stack-types.js';

const TIMER_INTERVAL_MS = 100; // = TCP_TMR_INTERVAL in lwipopts.h
const DEFAULT_CONNECT_TIMEOUT_MS = 15_000;

/**
 * One user-space TCP/IP stack: an lwIP WebAssembly instance with one interface, raw IP or Ethernet.
 *
 * lwIP is never re-entered. Everything it reports during a call (output packets, TCP and UDP
 * events) is copied out and queued, and handled once the outermost call has returned; input that
 * arrives while lwIP is running is deferred the same way.
 */
export class Stack {
  #address: string;
  readonly mtu: number;
  readonly #lease = new LeaseKeeper();
  /** Set once, as soon as the instance exists (lwip-start.ts). */
  #ex!: LwipExports;
  readonly #output: (packet: Buffer) => void;
  readonly #maxConnections: number;
  readonly #tcp = new Map<number, TcpStream>();
  readonly #udp = new Map<number, StackUdpSocket>();
  readonly #pings = new Map<string, (rttMs: number) => void>();
  readonly #listeners = new Map<number, { pcb: number; onConnection: (s: TcpStream) => void }>();
  readonly #timer: NodeJS.Timeout;
  readonly #infoPtr: number;
  readonly #statsPtr: number;
  readonly #scratch: number;
  #events: StackEvent[] = [];
  #outQueue: Buffer[] = [];
  /** lwIP's memory: the view over it, the receive arena, copies out (lwip-memory.ts). */
  readonly #memory: LwipMemory;
  /** What a socket's operations need of this stack (tcp-ops.ts, udp-ops.ts). */
  readonly #pcbHost: PcbHost;
  readonly #targets: DispatchTargets; // whom lwIP's events are for: made once, not per event
  #deferredInput: Buffer[] = [];
  #depth = 0;
  #draining = false;
  #closed = false;
  #nextId = 1;
  #pingIdent = randomBytes(2).readUInt16BE();
  #pingSeq = 0;
  readonly #counters = { packetsIn: 0, packetsOut: 0, bytesIn: 0, bytesOut: 0, inputDropped: 0 };
  readonly #acks: NonNullable<StackOptions['acks']>;
  #ackFlush: NodeJS.Immediate | null = null;
  /**
   * An lwIP assertion failed: its memory can no longer be trusted, so nothing calls into it again.
   * The stack closes itself and tells its owner (onFailed), which closes the tunnel.
   */
  #failure: GatehopError | null = null;
  readonly #failedHandlers = new Set<(err: GatehopError) => void>();
  /** injectLwipAssertion: the next call into lwIP fails as an lwIP assertion would. */
  #injectedAssertion = false;

  constructor(opts: StackOptions) {
    if (!opts.ethernet && isIP(opts.address ?? '') !== 4)
      throw new TypeError(`stack address must be IPv4, got ${opts.address}`);
    if (opts.ethernet && opts.ethernet.mac.length !== 6) throw new TypeError('an Ethernet MAC is 6 bytes');
    if (!Number.isInteger(opts.mtu) || opts.mtu < 576 || opts.mtu > 65_535)
      throw new RangeError(`MTU ${opts.mtu} out of range 576..65535`);
    this.#address = opts.ethernet ? '0.0.0.0' : opts.address!;
    this.mtu = opts.mtu;
    this.#output = opts.output;
    this.#maxConnections = opts.maxConnections ?? 4096;
    // The gateway's owner copies each packet out within the turn (core/capture): arenas serve it.
    this.#memory = new LwipMemory(() => this.#ex.memory, opts.captureGateway === true);
    if (opts.captureGateway && opts.ethernet) throw new TypeError('a capture gateway stack is raw IP');
    const lwip = startLwip(opts, {
      // Set before lwIP initialises: its first calls may already reach the memory view.
      instantiated: (ex) => void (this.#ex = ex),
      memory: this.#memory,
      event: (ev) => void this.#events.push(ev),
      output: (packet) => void this.#outQueue.push(packet),
      assertionFailed: (file, line) => this.#assertionFailed(file, line),
    });
    this.#acks = opts.acks ?? 'each-segment';
    ({ infoPtr: this.#infoPtr, statsPtr: this.#statsPtr, scratch: this.#scratch } = lwip);
    this.#pcbHost = {
      ex: this.#ex,
      call: (fn) => this.#call(fn),
      failed: () => this.#failure !== null,
      closed: () => this.#closed,
      scratch: this.#scratch,
      infoPtr: this.#infoPtr,
      releaseTcp: (id) => void this.#tcp.delete(id),
      releaseUdp: (id) => void this.#udp.delete(id),
    };
    this.#targets = {
      tcp: this.#tcp,
      udp: this.#udp,
      pings: this.#pings,
      listeners: this.#listeners,
      maxConnections: this.#maxConnections,
      lease: (lease) => {
        // lwIP reports the netif while DHCP binds (address still 0.0.0.0): no lease was lost.
        if (!lease && !this.#lease.lease) return;
        // The address first: a lease handler may open connections from it.
        this.#address = lease?.address ?? '0.0.0.0';
        this.#lease.apply(lease);
      },
      accept: (ev) =>
        new TcpStream(
          ev.id,
          tcpPcbOps(this.#pcbHost, ev.id, ev.pcb),
          { address: ev.address, port: ev.port },
          ev.localAddress,
        ),
    };
    this.#timer = setInterval(
      () => this.#fromEvent(() => this.#call(() => this.#ex.gh_check_timeouts())),
      TIMER_INTERVAL_MS,
    );
    this.#timer.unref();
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** The stack's address: a raw-IP link's from the start, an Ethernet link's once DHCP gave one ('0.0.0.0' before). */
  get address(): string {
    return this.#address;
  }

  /** An Ethernet link's DHCP lease in use, or null (none yet, or lost). */
  get lease(): StackLease | null {
    return this.#lease.lease;
  }

  /** Called with each lease an Ethernet link gets (bound, renewed to another address) or loses (null). */
  onLease(fn: (lease: StackLease | null) => void): () => void {
    return this.#lease.onLease(fn);
  }

  /** The first lease of an Ethernet link; GH_ERR_EGRESS_CONNECT_TIMEOUT when none comes in time. */
  whenLeased(opts: { timeoutMs: number; signal?: AbortSignal }): Promise<StackLease> {
    return this.#lease.whenLeased(opts);
  }

  /** Why the stack failed (an lwIP assertion, GH_ERR_NETSTACK_FAILED), or null. */
  get failure(): GatehopError | null {
    return this.#failure;
  }

  /** Called once if an lwIP assertion fails; the stack has closed itself by then. */
  onFailed(fn: (err: GatehopError) => void): () => void {
    this.#failedHandlers.add(fn);
    return () => this.#failedHandlers.delete(fn);
  }

  /** An IP packet from the tunnel. Malformed packets are dropped by lwIP and counted. */
  input(packet: Buffer): void {
    if (this.#closed) return;
    if (packet.length === 0 || packet.length > 65_535) {
      this.#counters.inputDropped++;
      return;
    }
    if (this.#depth > 0) {
      this.#deferredInput.push(Buffer.from(packet));
      return;
    }
    if (this.#acks === 'per-batch' || this.#acks === 'per-turn')
      this.#ackFlush ??= setImmediate(() => this.#flushAcks());
    this.#fromEvent(() => this.#call(() => this.#inputOne(packet)));
  }

  /**
   * IP packets that arrived together, as one batch: lwIP takes them all before anything it says
   * is handled, so one stream's data from the whole batch reaches its reader as one chunk, and
   * with per-batch ACKs the ACKs for the batch leave with it (one sealed batch, one sendmmsg);
   * with per-turn ACKs, once at the turn's end.
   */
  inputBatch(packets: readonly Buffer[]): void {
    if (this.#closed) return;
    if (this.#depth > 0) {
      for (const p of packets) this.input(p);
      return;
    }
    const batching = this.#acks === 'per-batch' || this.#acks === 'per-turn';
    if (!batching) {
      this.#fromEvent(() => this.#call(() => packets.forEach((p) => this.#inputOne(p))));
      return;
    }
    // In-order data of the whole batch (or turn) is acked once (glue.c g_batching), after its
    // readers took it: their reads reopen the window without ACKs of their own
    // (g_defer_wnd_update), so the one ACK carries the window as it is then. The call's end hands
    // the data to the readers.
    this.#fromEvent(() =>
      this.#call(() => {
        this.#ex.gh_set_defer_wnd_update(1);
        this.#ex.gh_set_batching(1);
        try {
          for (const packet of packets) this.#inputOne(packet);
        } finally {
          this.#ex.gh_set_batching(0);
        }
      }),
    );
    if (this.#acks === 'per-turn') this.#ackFlush ??= setImmediate(() => this.#flushAcks());
    else this.#flushAcks();
  }

  #inputOne(packet: Buffer): void {
    if (packet.length === 0 || packet.length > 65_535) {
      this.#counters.inputDropped++;
      return;
    }
    this.#counters.packetsIn++;
    this.#counters.bytesIn += packet.length;
    const ptr = this.#ex.gh_input_alloc(packet.length);
    if (ptr === 0) {
      this.#counters.inputDropped++;
      return;
    }
    packet.copy(this.#memory.view(), ptr);
    this.#ex.gh_input_commit();
  }

  /** Opens a TCP connection to an IPv4 address through this stack. */
  connectTcp(ip: string, port: number, opts: ConnectOptions = {}): Promise<TcpStream> {
    const target = `${ip}:${port}`;
    const refused = connectRefusal(ip, port, opts.signal, {
      closed: this.#closed,
      open: this.#tcp.size,
      max: this.#maxConnections,
    });
    if (refused) return Promise.reject(refused);
    const id = this.#nextId++;
    const pcb = this.#call(() => this.#ex.gh_tcp_connect(id, ipv4ToWasm(ip), port));
    if (pcb === 0)
      return Promise.reject(
        new GatehopError(ErrorCodes.NETSTACK_FAILED, `connect to ${target}: lwIP could not create the connection`),
      );
    const stream = new TcpStream(id, tcpPcbOps(this.#pcbHost, id, pcb), { address: ip, port }, this.address);
    this.#tcp.set(id, stream);
    const timeoutMs = opts.timeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    return settleFirst<TcpStream>(
      {
        signal: opts.signal,
        what: `connect to ${target}`,
        deadline: {
          ms: timeoutMs,
          error: () =>
            new GatehopError(ErrorCodes.EGRESS_CONNECT_TIMEOUT, `connect to ${target} timed out after ${timeoutMs} ms`),
        },
      },
      (settle) => {
        const onConnect = (): void => settle.resolve(stream);
        const onError = (err: Error): void => settle.reject(err);
        const onClose = (): void =>
          settle.reject(new GatehopError(ErrorCodes.NETSTACK_CLOSED, `connect to ${target}: closed before connecting`));
        stream.once('connect', onConnect);
        stream.once('error', onError);
        stream.once('close', onClose);
        return (resolved) => {
          stream.off('connect', onConnect);
          stream.off('error', onError);
          stream.off('close', onClose);
          if (!resolved) stream.destroy();
        };
      },
    );
  }

  /**
   * Accepts TCP connections on a port of this stack (the far side of in-process test links, or a
   * local service on the tunnel address). On a gateway stack the one listener takes connections to
   * every address and port (each stream's localAddress and localPort say which). Returns a closer.
   */
  listenTcp(port: number, onConnection: (stream: TcpStream) => void): { close(): void } {
    if (this.#closed) throw new GatehopError(ErrorCodes.NETSTACK_CLOSED, 'stack closed: cannot listen');
    const id = this.#nextId++;
    const pcb = this.#call(() => this.#ex.gh_tcp_listen(id, port));
    if (pcb === 0) throw new GatehopError(ErrorCodes.NETSTACK_FAILED, `cannot listen on ${this.address}:${port}`);
    this.#listeners.set(id, { pcb, onConnection });
    return {
      close: () => {
        if (!this.#listeners.delete(id) || this.#closed) return;
        this.#call(() => this.#ex.gh_tcp_listen_close(pcb));
      },
    };
  }

  /** A UDP socket bound to an ephemeral port of this stack. */
  openUdp(): StackUdpSocket {
    if (this.#closed) throw new GatehopError(ErrorCodes.NETSTACK_CLOSED, 'stack closed: cannot open a UDP socket');
    const id = this.#nextId++;
    const pcb = this.#call(() => this.#ex.gh_udp_new(id));
    if (pcb === 0) throw new GatehopError(ErrorCodes.NETSTACK_FAILED, 'lwIP could not create a UDP socket');
    const socket = new StackUdpSocket(id, udpPcbOps(this.#pcbHost, id, pcb));
    this.#udp.set(id, socket);
    return socket;
  }

  /** ICMP echo; resolves with the round trip in ms. */
  ping(ip: string, opts: { timeoutMs?: number; size?: number; signal?: AbortSignal } = {}): Promise<number> {
    if (this.#closed) return Promise.reject(new GatehopError(ErrorCodes.NETSTACK_CLOSED, 'stack closed'));
    if (isIP(ip) !== 4) return Promise.reject(new TypeError(`ping needs IPv4, got ${ip}`));
    const seq = (this.#pingSeq = (this.#pingSeq + 1) & 0xffff);
    const key = `${ip}/${this.#pingIdent}/${seq}`;
    const started = performance.now();
    const timeoutMs = opts.timeoutMs ?? 3000;
    return settleFirst<number>(
      {
        signal: opts.signal,
        what: `ping ${ip}`,
        deadline: {
          ms: timeoutMs,
          error: () =>
            new GatehopError(ErrorCodes.EGRESS_CONNECT_TIMEOUT, `ping ${ip}: no reply within ${timeoutMs} ms`),
        },
      },
      (settle) => {
        this.#pings.set(key, () => settle.resolve(performance.now() - started));
        const err = this.#call(() => this.#ex.gh_ping(ipv4ToWasm(ip), this.#pingIdent, seq, opts.size ?? 32));
        if (err !== LwipErr.OK)
          settle.reject(new GatehopError(ErrorCodes.NETSTACK_FAILED, `ping ${ip}: lwIP ${lwipErrName(err)}`));
        return () => this.#pings.delete(key);
      },
    );
  }

  get stats(): StackStats {
    const s = new Uint32Array(STATS_WORDS);
    if (!this.#closed) {
      this.#call(() => this.#ex.gh_stats(this.#statsPtr));
      s.set(new Uint32Array(this.#ex.memory.buffer, this.#statsPtr, STATS_WORDS));
    }
    return {
      ...this.#counters,
      ...decodeStats(s),
      connections: this.#tcp.size,
      udpSockets: this.#udp.size,
      wasmMemoryBytes: this.#closed ? 0 : this.#ex.memory.buffer.byteLength,
      heapBytes: this.#closed ? 0 : this.#ex.gh_heap_bytes(),
    };
  }

  /** The ACKs held for the batch or turn, each with the window its readers have reopened by now. */
  #flushAcks(): void {
    if (this.#ackFlush) clearImmediate(this.#ackFlush);
    this.#ackFlush = null;
    if (this.#closed) return;
    this.#fromEvent(() =>
      this.#call(() => {
        this.#ex.gh_set_defer_wnd_update(0);
        this.#ex.gh_flush_acks();
      }),
    );
  }

  /**
   * Work that a packet or a timer started, with no caller to hand an error to: an lwIP failure has
   * been reported through onFailed by now, so it stops here rather than reaching the process's
   * uncaughtException (fatal for the whole app when tunnels run on the main thread).
   */
  #fromEvent(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      if (this.#failure && (err === this.#failure || isNetstackFailure(err))) return;
      throw err;
    }
  }

  /** Resets every connection, closes every socket and stops the timer. Idempotent. */
  close(): void {
    if (this.#closed) return;
    // Connections reset while lwIP still runs (their abort reaches the peer), then the rest.
    this.#endConnections(new GatehopError(ErrorCodes.NETSTACK_CLOSED, 'stack closed'));
    // An Ethernet link gives its address back (DHCP release) while its output still goes out.
    if (this.#lease.lease && !this.#failure) this.#fromEvent(() => this.#call(() => this.#ex.gh_dhcp_release()));
    this.#closed = true;
    this.#releaseAll();
  }

  #endConnections(err: GatehopError): void {
    for (const s of [...this.#tcp.values()]) s.destroy(err);
    for (const u of [...this.#udp.values()]) u.close();
  }

  /** What the stack holds, dropped; lwIP is not called. */
  #releaseAll(): void {
    if (this.#ackFlush) clearImmediate(this.#ackFlush);
    this.#ackFlush = null;
    clearInterval(this.#timer);
    this.#tcp.clear();
    this.#udp.clear();
    this.#pings.clear();
    this.#listeners.clear();
    this.#events = [];
    this.#outQueue = [];
    this.#deferredInput = [];
  }

  // ---- internals ----

  /**
   * The only way into lwIP: counts depth and handles queued work once the outermost call returns.
   * An lwIP assertion (js_assert, thrown through the WebAssembly frames) fails the stack: it is
   * closed without another call into lwIP, its owner told, and the coded error thrown to the caller.
   */
  #call<T>(fn: () => T): T {
    if (this.#failure) throw this.#failure;
    if (this.#closed) throw new GatehopError(ErrorCodes.NETSTACK_CLOSED, 'stack is closed');
    this.#depth++;
    try {
      if (this.#injectedAssertion) {
        this.#injectedAssertion = false;
        this.#assertionFailed('injected (test)', 0);
      }
      return fn();
    } catch (err) {
      if (this.#failure && this.#depth === 1) this.#failClose();
      throw err;
    } finally {
      this.#depth--;
      if (this.#depth === 0 && !this.#failure) this.#drain();
    }
  }

  /** What js_assert does: remember the failure (nothing may call lwIP again) and unwind with it. */
  #assertionFailed(file: string, line: number): never {
    this.#failure ??= new GatehopError(ErrorCodes.NETSTACK_FAILED, `lwIP assertion failed at ${file}:${line}`);
    throw this.#failure;
  }

  /** Closes a failed stack without calling lwIP (its connections end with the failure) and tells the owner. */
  #failClose(): void {
    const err = this.#failure!;
    if (this.#closed) return;
    // #closed first: the streams' abort and close must not call into lwIP.
    this.#closed = true;
    this.#endConnections(err);
    this.#releaseAll();
    for (const fn of [...this.#failedHandlers]) fn(err);
    this.#failedHandlers.clear();
  }

  /** For tests: the next call into lwIP fails as an lwIP assertion would (injectLwipAssertion). */
  injectAssertionForTest(): void {
    this.#injectedAssertion = true;
  }

  #drain(): void {
    if (this.#draining) return;
    this.#draining = true;
    try {
      while (
        !this.#closed &&
        (this.#outQueue.length > 0 || this.#events.length > 0 || this.#deferredInput.length > 0)
      ) {
        if (this.#outQueue.length > 0) {
          for (const packet of this.#outQueue.splice(0)) {
            this.#counters.packetsOut++;
            this.#counters.bytesOut += packet.length;
            this.#output(packet);
          }
        }
        if (this.#events.length > 0) this.#dispatchAll(this.#events.splice(0));
        if (this.#deferredInput.length > 0) {
          for (const packet of this.#deferredInput.splice(0)) this.input(packet);
        }
      }
    } finally {
      this.#draining = false;
    }
  }

  /** Events in order, a run of data for one stream as one chunk (stack-events.ts). */
  #dispatchAll(events: StackEvent[]): void {
    forEachCoalesced(events, (ev) => this.#dispatch(ev));
  }

  #dispatch(ev: StackEvent): void {
    dispatchStackEvent(ev, this.#targets);
  }
}

function isNetstackFailure(err: unknown): boolean {
  return err instanceof GatehopError && err.code === ErrorCodes.NETSTACK_FAILED;
}
