import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { abortReason, ErrorCodes, GatehopError, settleFirst } from '../common/index.js';
import { ipv4FromWasm, ipv4ToWasm, netmaskFrom } from './ipv4.js';
import { LwipErr, lwipErrName } from './lwip-errors.js';
import { TcpStream, type TcpInfo, type TcpPcbOps } from './tcp-stream.js';
import { StackUdpSocket } from './udp-socket.js';
import { lwipModule, type LwipExports, type LwipImports } from './wasm-module.js';

export interface StackOptions {
  /** The tunnel's address, netmask (dotted or prefix length), gateway and MTU (a raw-IP link). */
  address?: string;
  netmask?: string | number;
  gateway?: string;
  mtu: number;
  /**
   * An Ethernet link instead (an SE-VPN hub port): this MAC, lwIP's own ARP, and the address from
   * its DHCP client (renewed at half the lease); onLease tells each new address or loss.
   */
  ethernet?: { mac: Buffer };
  /** Receives every IP packet (an Ethernet frame on an Ethernet link) the stack sends; called after lwIP returns, never from inside it. */
  output: (packet: Buffer) => void;
  /** Checksums on by default; only in-process links whose both ends are ours may turn them off. */
  checksums?: boolean;
  /** New connections past this fail with GH_ERR_NETSTACK_LIMIT; existing ones are unaffected. */
  maxConnections?: number;
  /**
   * When received data is acknowledged: 'each-segment' (default) at once, for senders that clock
   * on ACKs with a small window (SoftEther's SecureNAT); 'delayed', lwIP's every second segment or
   * on its timer; 'per-batch', in-order data of each batch of input acked once, after its readers
   * took it, so no segment waits for the timer; 'per-turn', as 'per-batch' but once at the end of
   * the event loop's turn, after every batch read in it (a TLS carrier hands over one record a
   * batch, several a turn, and each ACK costs it a record and a write).
   */
  acks?: 'each-segment' | 'delayed' | 'per-batch' | 'per-turn';
}

/** What DHCP gave an Ethernet link (dns: the servers it named, else the gateway). */
export interface StackLease {
  address: string;
  netmask: string;
  gateway: string;
  dns: string[];
}

export interface StackStats {
  packetsIn: number;
  packetsOut: number;
  bytesIn: number;
  bytesOut: number;
  /** Input packets refused before lwIP saw them (empty, oversized, out of memory). */
  inputDropped: number;
  ip: { xmit: number; recv: number; drop: number; chkerr: number; lenerr: number };
  tcp: { xmit: number; recv: number; drop: number; retransmissions: number; chkerr: number; active: number };
  udp: { xmit: number; recv: number; drop: number };
  icmp: { xmit: number; recv: number };
  connections: number;
  udpSockets: number;
  wasmMemoryBytes: number;
  /** What lwIP's allocator has taken from that memory (a high-water mark: it never shrinks). */
  heapBytes: number;
}

export interface ConnectOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
}

type StackEvent =
  | { t: 'connected'; id: number }
  | { t: 'data'; id: number; data: Buffer }
  | { t: 'fin'; id: number }
  | { t: 'sent'; id: number }
  | { t: 'err'; id: number; err: number }
  | { t: 'poll'; id: number }
  | { t: 'udp'; id: number; data: Buffer; address: string; port: number }
  | { t: 'icmp'; address: string; ident: number; seq: number }
  | { t: 'accepted'; listenerId: number; id: number; pcb: number; address: string; port: number }
  | { t: 'lease'; lease: StackLease | null };

const TIMER_INTERVAL_MS = 100; // = TCP_TMR_INTERVAL in lwipopts.h
/** The receive arena's size: a batch's worth of segments (64 KiB is ~45 full segments). */
const ARENA_BYTES = 64 * 1024;
/** Runs shorter than this are copied out of the arena (ownSmall). */
const SMALL_COPY_BYTES = 4 * 1024;
const DEFAULT_CONNECT_TIMEOUT_MS = 15_000;
const INFO_WORDS = 8;
const STATS_WORDS = 16;

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
  #lease: StackLease | null = null;
  readonly #leaseHandlers = new Set<(lease: StackLease | null) => void>();
  readonly #ex: LwipExports;
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
  /** A Buffer over lwIP's whole memory, made again only when the memory grows (not per packet). */
  #memView: Buffer | null = null;
  /**
   * Received TCP data is copied out of lwIP into this arena, segment after segment, instead of a
   * new buffer per segment: a stream's run of segments in one batch is then one contiguous slice
   * (no concat), and the garbage per segment is a view, not a backing store.
   */
  #arena: Buffer | null = null;
  #arenaAt = 0;
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
    const instance = new WebAssembly.Instance(lwipModule(), {
      env: this.#imports() as unknown as WebAssembly.ModuleImports,
    });
    this.#ex = instance.exports as unknown as LwipExports;
    this.#ex._initialize();
    let rc: number;
    if (opts.ethernet) {
      const mac = this.#ex.gh_malloc(6);
      new Uint8Array(this.#ex.memory.buffer, mac, 6).set(opts.ethernet.mac);
      rc = this.#ex.gh_init_eth(mac, opts.mtu);
      this.#ex.gh_free(mac);
    } else {
      rc = this.#ex.gh_init(
        ipv4ToWasm(opts.address!),
        ipv4ToWasm(netmaskFrom(opts.netmask ?? 24)),
        ipv4ToWasm(opts.gateway ?? '0.0.0.0'),
        opts.mtu,
      );
    }
    if (rc !== 0) throw new GatehopError(ErrorCodes.NETSTACK_FAILED, `lwIP init failed (${rc})`);
    this.#ex.gh_set_checksums(opts.checksums === false ? 0 : 1);
    this.#acks = opts.acks ?? 'each-segment';
    this.#ex.gh_set_quickack(this.#acks === 'each-segment' ? 1 : 0);
    this.#infoPtr = this.#ex.gh_malloc(INFO_WORDS * 4);
    this.#statsPtr = this.#ex.gh_malloc(STATS_WORDS * 4);
    this.#scratch = this.#ex.gh_scratch();
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
    return this.#lease;
  }

  /** Called with each lease an Ethernet link gets (bound, renewed to another address) or loses (null). */
  onLease(fn: (lease: StackLease | null) => void): () => void {
    this.#leaseHandlers.add(fn);
    return () => this.#leaseHandlers.delete(fn);
  }

  /** The first lease of an Ethernet link; GH_ERR_EGRESS_CONNECT_TIMEOUT when none comes in time. */
  whenLeased(opts: { timeoutMs: number; signal?: AbortSignal }): Promise<StackLease> {
    if (this.#lease) return Promise.resolve(this.#lease);
    return settleFirst<StackLease>(
      {
        signal: opts.signal,
        what: 'DHCP',
        deadline: {
          ms: opts.timeoutMs,
          error: () => new GatehopError(ErrorCodes.EGRESS_CONNECT_TIMEOUT, `no DHCP lease within ${opts.timeoutMs} ms`),
        },
      },
      (settle) =>
        this.onLease((lease) => {
          if (lease) settle.resolve(lease);
        }),
    );
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
    packet.copy(this.#mem(), ptr);
    this.#ex.gh_input_commit();
  }

  /** Opens a TCP connection to an IPv4 address through this stack. */
  connectTcp(ip: string, port: number, opts: ConnectOptions = {}): Promise<TcpStream> {
    const target = `${ip}:${port}`;
    if (this.#closed)
      return Promise.reject(new GatehopError(ErrorCodes.NETSTACK_CLOSED, `stack closed: cannot connect to ${target}`));
    if (isIP(ip) !== 4)
      return Promise.reject(
        new GatehopError(ErrorCodes.EGRESS_NETWORK_UNREACHABLE, `${target}: the tunnel stack is IPv4 only`),
      );
    if (!Number.isInteger(port) || port < 1 || port > 65_535)
      return Promise.reject(new GatehopError(ErrorCodes.EGRESS_FAILED, `${target}: bad port`));
    if (opts.signal?.aborted) return Promise.reject(abortReason(opts.signal, `connect to ${target}`));
    if (this.#tcp.size >= this.#maxConnections) {
      return Promise.reject(
        new GatehopError(
          ErrorCodes.NETSTACK_LIMIT,
          `connect to ${target}: ${this.#maxConnections} connections already open on this stack`,
        ),
      );
    }
    const id = this.#nextId++;
    const pcb = this.#call(() => this.#ex.gh_tcp_connect(id, ipv4ToWasm(ip), port));
    if (pcb === 0)
      return Promise.reject(
        new GatehopError(ErrorCodes.NETSTACK_FAILED, `connect to ${target}: lwIP could not create the connection`),
      );
    const stream = new TcpStream(id, this.#tcpOps(id, pcb), { address: ip, port }, this.address);
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
   * local service on the tunnel address). Returns a closer for the listener.
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
    const socket = new StackUdpSocket(id, {
      send: (data, ip, port) => {
        if (this.#closed || isIP(ip) !== 4 || data.length > 65_507) return LwipErr.VAL;
        return this.#call(() => {
          const ptr = this.#ex.gh_malloc(data.length || 1);
          if (ptr === 0) return LwipErr.MEM;
          new Uint8Array(this.#ex.memory.buffer, ptr, data.length).set(data);
          const err = this.#ex.gh_udp_sendto(pcb, ptr, data.length, ipv4ToWasm(ip), port);
          this.#ex.gh_free(ptr);
          return err;
        });
      },
      localPort: () => (this.#closed ? 0 : this.#ex.gh_udp_local_port(pcb)),
      close: () => {
        this.#udp.delete(id);
        if (!this.#closed) this.#call(() => this.#ex.gh_udp_remove(pcb));
      },
    });
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
      ip: { xmit: s[0]!, recv: s[1]!, drop: s[2]!, chkerr: s[14]!, lenerr: s[15]! },
      tcp: { xmit: s[3]!, recv: s[4]!, drop: s[5]!, retransmissions: s[6]!, chkerr: s[7]!, active: s[13]! },
      udp: { xmit: s[8]!, recv: s[9]!, drop: s[10]! },
      icmp: { xmit: s[11]!, recv: s[12]! },
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
    if (this.#lease && !this.#failure) this.#fromEvent(() => this.#call(() => this.#ex.gh_dhcp_release()));
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

  #tcpOps(id: number, pcb: number): TcpPcbOps {
    const ex = this.#ex;
    return {
      sndbuf: () => this.#call(() => ex.gh_tcp_sndbuf(pcb)),
      write: (data, offset, len, more) =>
        this.#call(() => {
          new Uint8Array(ex.memory.buffer, this.#scratch, len).set(data.subarray(offset, offset + len));
          return ex.gh_tcp_write(pcb, this.#scratch, len, more ? 1 : 0);
        }),
      output: () => void this.#call(() => ex.gh_tcp_output(pcb)),
      recved: (len) => this.#call(() => ex.gh_tcp_recved(pcb, len)),
      shutdownTx: () => this.#call(() => ex.gh_tcp_shutdown_tx(pcb)),
      // A failed stack's pcbs are gone with its memory: nothing to close there.
      close: () => {
        if (!this.#failure) this.#call(() => ex.gh_tcp_close(pcb));
      },
      abort: () => {
        if (!this.#failure) this.#call(() => ex.gh_tcp_abort(pcb));
      },
      info: (): TcpInfo => {
        const w = this.#call(() => {
          ex.gh_tcp_info(pcb, this.#infoPtr);
          return new Uint32Array(ex.memory.buffer, this.#infoPtr, INFO_WORDS).slice();
        });
        return {
          state: w[0]!,
          srttMs: w[1]!,
          retransmissions: w[2]!,
          sndBuf: w[3]!,
          rcvWnd: w[4]!,
          mss: w[5]!,
          localPort: w[6]!,
        };
      },
      release: () => {
        this.#tcp.delete(id);
      },
    };
  }

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

  /** Events in order; a run of data for one stream goes to it as one chunk (one push, one tcp_recved). */
  #dispatchAll(events: StackEvent[]): void {
    for (let i = 0; i < events.length; i++) {
      const ev = events[i]!;
      if (ev.t === 'data') {
        let end = i + 1;
        while (end < events.length && events[end]!.t === 'data' && (events[end] as { id: number }).id === ev.id) end++;
        if (end > i + 1) {
          this.#dispatch({
            t: 'data',
            id: ev.id,
            data: joined(events.slice(i, end).map((e) => (e as { data: Buffer }).data)),
          });
          i = end - 1;
          continue;
        }
      }
      this.#dispatch(ev);
    }
  }

  #dispatch(ev: StackEvent): void {
    if (ev.t === 'udp') {
      this.#udp.get(ev.id)?.deliver({ data: ev.data, address: ev.address, port: ev.port });
      return;
    }
    if (ev.t === 'icmp') {
      this.#pings.get(`${ev.address}/${ev.ident}/${ev.seq}`)?.(0);
      return;
    }
    if (ev.t === 'lease') {
      // lwIP reports the netif while DHCP binds (address still 0.0.0.0): no lease was lost.
      if (!ev.lease && !this.#lease) return;
      this.#lease = ev.lease;
      this.#address = ev.lease?.address ?? '0.0.0.0';
      for (const fn of [...this.#leaseHandlers]) fn(ev.lease);
      return;
    }
    if (ev.t === 'accepted') {
      const listener = this.#listeners.get(ev.listenerId);
      const stream = new TcpStream(
        ev.id,
        this.#tcpOps(ev.id, ev.pcb),
        { address: ev.address, port: ev.port },
        this.address,
      );
      this.#tcp.set(ev.id, stream);
      if (!listener || this.#tcp.size > this.#maxConnections) {
        stream.destroy(); // resets the peer
        return;
      }
      stream.onConnected();
      listener.onConnection(stream);
      return;
    }
    const stream = this.#tcp.get(ev.id);
    if (!stream) return; // the stream let go of its pcb; lwIP's late news is moot
    switch (ev.t) {
      case 'connected':
        stream.onConnected();
        break;
      case 'data':
        stream.onData(ownSmall(ev.data));
        break;
      case 'fin':
        stream.onFin();
        break;
      case 'sent':
        stream.onSent();
        break;
      case 'poll':
        stream.onPoll();
        break;
      case 'err':
        stream.onError(ev.err);
        break;
    }
  }

  /** lwIP's memory as a Buffer; a new view only after the memory grew (the old one is detached then). */
  #mem(): Buffer {
    const buffer = this.#ex.memory.buffer;
    if (this.#memView?.buffer !== buffer) this.#memView = Buffer.from(buffer);
    return this.#memView;
  }

  /** TCP data out of lwIP into the arena (see #arena); a new arena when this one is full. */
  #copyData(ptr: number, len: number): Buffer {
    if (!this.#arena || this.#arenaAt + len > this.#arena.length) {
      this.#arena = Buffer.allocUnsafeSlow(Math.max(ARENA_BYTES, len));
      this.#arenaAt = 0;
    }
    const at = this.#arenaAt;
    this.#mem().copy(this.#arena, at, ptr, ptr + len);
    this.#arenaAt += len;
    return this.#arena.subarray(at, at + len);
  }

  #copyOut(ptr: number, len: number): Buffer {
    const b = Buffer.allocUnsafe(len);
    b.set(new Uint8Array(this.#ex.memory.buffer, ptr, len));
    return b;
  }

  #imports(): LwipImports {
    const t0 = performance.now();
    return {
      js_now: () => Math.floor(performance.now() - t0) >>> 0,
      js_rand: () => randomBytes(4).readUInt32LE(),
      js_assert: (file, line) => {
        const mem = new Uint8Array(this.#ex.memory.buffer);
        let end = file;
        while (end < mem.length && mem[end] !== 0 && end - file < 256) end++;
        const name = Buffer.from(mem.subarray(file, end)).toString('latin1');
        this.#assertionFailed(name, line);
      },
      js_output: (ptr, len) => void this.#outQueue.push(this.#copyOut(ptr, len)),
      js_tcp_connected: (id) => void this.#events.push({ t: 'connected', id }),
      js_tcp_recv: (id, ptr, len) => void this.#events.push({ t: 'data', id, data: this.#copyData(ptr, len) }),
      js_tcp_fin: (id) => void this.#events.push({ t: 'fin', id }),
      js_tcp_sent: (id) => void this.#events.push({ t: 'sent', id }),
      js_tcp_err: (id, err) => void this.#events.push({ t: 'err', id, err }),
      js_tcp_poll: (id) => void this.#events.push({ t: 'poll', id }),
      js_udp_recv: (id, ptr, len, src, port) =>
        void this.#events.push({ t: 'udp', id, data: this.#copyOut(ptr, len), address: ipv4FromWasm(src), port }),
      js_icmp_reply: (src, ident, seq) => void this.#events.push({ t: 'icmp', address: ipv4FromWasm(src), ident, seq }),
      js_tcp_accepted: (listenerId, id, pcb, ip, port) =>
        void this.#events.push({ t: 'accepted', listenerId, id, pcb, address: ipv4FromWasm(ip), port }),
      js_eth_addr: (ip, mask, gw, dns1, dns2) => {
        const address = ipv4FromWasm(ip);
        const gateway = ipv4FromWasm(gw);
        const dns = [dns1, dns2].filter((d) => d !== 0).map(ipv4FromWasm);
        this.#events.push({
          t: 'lease',
          lease:
            address === '0.0.0.0'
              ? null
              : { address, netmask: ipv4FromWasm(mask), gateway, dns: dns.length ? dns : [gateway] },
        });
      },
    };
  }
}

/** Chunks as one Buffer: a single slice when they lie end to end in one arena (the usual case), else a copy. */
function joined(chunks: Buffer[]): Buffer {
  const first = chunks[0]!;
  let end = first.byteOffset + first.length;
  for (let i = 1; i < chunks.length; i++) {
    const c = chunks[i]!;
    if (c.buffer !== first.buffer || c.byteOffset !== end) return Buffer.concat(chunks);
    end += c.length;
  }
  return Buffer.from(first.buffer, first.byteOffset, end - first.byteOffset);
}

/**
 * A small run of data gets its own copy: as a slice it would keep its whole 64 KiB arena alive for
 * as long as a slow reader holds it (a keep-alive's few bytes pinning 64 KiB each).
 */
function ownSmall(data: Buffer): Buffer {
  return data.length < SMALL_COPY_BYTES && data.buffer.byteLength > data.length * 4 ? Buffer.from(data) : data;
}

function isNetstackFailure(err: unknown): boolean {
  return err instanceof GatehopError && err.code === ErrorCodes.NETSTACK_FAILED;
}
