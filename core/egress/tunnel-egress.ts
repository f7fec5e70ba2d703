import { isIP } from 'node:net';
import { abortReason, ErrorCodes, GatehopError, SleepDetector, type Logger } from '../common/index.js';
import { TRUST_RULE_TEXT } from '../reach/index.js';
import { DnsResolver, DohTransport, Stack, type StackUdpSocket } from '../netstack/index.js';
import { getHeapStatistics } from 'node:v8';
import type { LinkState, TunnelDiagnostics, TunnelEgressOptions } from './tunnel-types.js';
import type {
  ConnectTcpOptions,
  Egress,
  EgressState,
  EgressStats,
  EgressTcpConnection,
  EgressUdpSocket,
  UdpDatagram,
} from '../contracts/index.js';
import { stackOptionsOf } from './tunnel-stack-options.js';
import type { BulkSample } from './bulk-meter.js';
import type { ConnectHostCounts } from './connect-hosts.js';
import { HealthTaps } from './health-taps.js';
import { ECHO_TIMEOUT_MS, SilenceLimits } from './silence-limits.js';
import { openLink } from './links/open-link.js';
import type { LinkConfig, TunnelLink, TunnelProtocol } from './tunnel-link.js';

/** switching.unresponsiveMs' default: a node on a near network is left 2 s after it went silent. */
export const DEFAULT_UNRESPONSIVE_MS = 2_000;
/** How often a tunnel checks its silence; while quiet, each tick sends its gateway an echo. */
const LIVENESS_TICK_MS = 250;
/** A tunnel already called silent is asked every this many ticks (1 s), not every tick. */
const SILENT_ECHO_EVERY_TICKS = 4;
/** A liveness tick this much later than due means the thread did not run meanwhile. */
const STALL_GAP_MS = 750;
/**
 * A tunnel (an OpenVPN, SSTP or SE-VPN link, links/) carrying a user-space TCP/IP stack (core/netstack)
 * behind the Egress interface. Names are resolved through the tunnel's DNS only.
 */
export class TunnelEgress implements Egress {
  readonly id: string;
  readonly nodeId: string;
  readonly stats: EgressStats = { bytesUp: 0, bytesDown: 0, sessionsActive: 0, sessionsTotal: 0, failures: 0 };
  /** What the health monitor learns from this tunnel's connects and downloads (#60). */
  readonly #taps = new HealthTaps(this.stats);
  readonly since = Date.now();
  #state: EgressState = 'ready';
  readonly #closeHandlers = new Set<(reason: string) => void>();
  readonly #livenessHandlers = new Set<(responsive: boolean, quietMs: number) => void>();
  #liveness: NodeJS.Timeout | null = null;
  #unresponsive = false;
  #gatewayAnswers = false;
  /** How long this tunnel may be quiet; the first gateway echo seeds its round-trip estimate. */
  #silence: SilenceLimits | null = null;
  readonly #healthDnsName: string;
  readonly #unresponsiveMs: number;

  private constructor(
    opts: TunnelEgressOptions,
    readonly link: TunnelLink,
    readonly stack: Stack,
    readonly dns: DnsResolver,
    readonly config: LinkConfig,
  ) {
    this.id = opts.id;
    this.nodeId = opts.nodeId;
    this.#healthDnsName = opts.healthDnsName ?? 'connectivitycheck.gstatic.com';
    this.#unresponsiveMs = opts.unresponsiveMs ?? DEFAULT_UNRESPONSIVE_MS;
    link.onDown((reason) => {
      if (this.#state !== 'closed') this.#fail(reason);
    });
    // L1 reconnect with a new address: connections on the old one cannot continue.
    link.onReconnected(({ addressChanged, address }) => {
      if (addressChanged && this.#state !== 'closed')
        this.#fail(`the server gave a new address (${address}) after reconnecting`);
    });
    // An Ethernet link's lease lost, or renewed to another address: connections on the old one cannot continue.
    if (config.ethernet)
      stack.onLease((lease) => {
        if (this.#state === 'closed' || lease?.address === config.address) return;
        this.#fail(lease ? `the hub's DHCP gave a new address (${lease.address})` : "the hub's DHCP lease was lost");
      });
    // An lwIP assertion: this tunnel's stack is gone (its sessions ended with GH_ERR_NETSTACK_FAILED);
    // the tunnel closes and the controller moves on as for a dead node. The process and every
    // other tunnel run on.
    stack.onFailed((err) => {
      opts.logger.error(
        { event: 'netstack-failed', egressId: this.id, nodeId: this.nodeId, errCode: err.code, err: err.message },
        `the tunnel's TCP/IP stack failed (${err.message}); closing this tunnel`,
      );
      if (this.#state !== 'closed') this.#fail(`${err.code}: ${err.message}`);
    });
  }

  /** The resolvers the tunnel gave (pushed, or the hub's DHCP lease): the node's own. */
  get dnsServers(): readonly string[] {
    return this.config.dns;
  }

  /** Which protocol carries this tunnel (for /status; nothing here depends on it). */
  get protocol(): TunnelProtocol {
    return this.link.protocol;
  }

  static async open(opts: TunnelEgressOptions): Promise<TunnelEgress> {
    // One deadline for the whole open: the link, then (SE-VPN) the hub's DHCP, within what is left.
    const deadline = Date.now() + (opts.connectTimeoutMs ?? 30_000);
    const opened = await openLink(opts.link, {
      logger: opts.logger.child({ egressId: opts.id, nodeId: opts.nodeId }),
      timeoutMs: opts.connectTimeoutMs ?? 30_000,
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    const link = opened.link;
    let config = opened.config;
    if (link.trustRule)
      opts.logger.info(
        {
          event: 'node-certificate',
          egressId: opts.id,
          nodeId: opts.nodeId,
          protocol: link.protocol,
          rule: link.trustRule,
        },
        `${opts.nodeId} (${link.protocol}): its certificate is trusted by ${TRUST_RULE_TEXT[link.trustRule]}`,
      );
    const stack = new Stack({ ...stackOptionsOf(config), output: (p) => link.write(p) });
    link.onPackets((batch) => stack.inputBatch(batch));
    // An Ethernet link (an SE-VPN hub port) has its address once the hub's DHCP gives one.
    if (config.ethernet) {
      try {
        const lease = await stack.whenLeased({
          timeoutMs: Math.max(1_000, deadline - Date.now()),
          ...(opts.signal ? { signal: opts.signal } : {}),
        });
        config = { ...config, address: lease.address, netmask: lease.netmask, gateway: lease.gateway, dns: lease.dns };
      } catch (err) {
        stack.close();
        link.close();
        throw err;
      }
    }
    const doh = opts.doh?.length
      ? new DohTransport({ connectTcp: (address, port, o) => stack.connectTcp(address, port, o) }, opts.doh)
      : undefined;
    const dns = new DnsResolver(stack, {
      servers: config.dns,
      fallback: opts.dnsFallback ?? ['1.1.1.1', '8.8.8.8'],
      ...(doh ? { doh } : {}),
    });
    const egress = new TunnelEgress(opts, link, stack, dns, config);
    try {
      await egress.#waitForPath(opts.logger, opts.signal);
    } catch (err) {
      await egress.close();
      throw err;
    }
    egress.#watchLiveness();
    return egress;
  }

  /**
   * A protocol's own keepalive (OpenVPN's ping-restart, SSTP's echo, SE-VPN's keep-alive) takes tens of seconds to call
   * a server dead. Whenever the server has been quiet for a while, ask it something that needs an
   * answer (an ICMP echo to the tunnel's gateway, again every tick while quiet); quiet past the
   * limit (SilenceLimits: `unresponsiveMs`, longer for a node whose echoes take long) means the
   * path is gone for now, and whoever switches egresses may move new sessions elsewhere. Traffic
   * coming back clears it.
   */
  #watchLiveness(): void {
    const unresponsiveMs = this.#unresponsiveMs;
    if (unresponsiveMs <= 0) return;
    const gateway = this.config.gateway;
    const limits = this.#silence ?? this.#newSilenceLimits();
    this.#silence = limits;
    // Without an answering gateway only the server's own pings break the silence.
    const keepaliveLimitMs = Math.max(unresponsiveMs, 2 * this.config.keepaliveS * 1000 + 1000);
    // A tick a second late means this thread did not run (a sleep, or a stall on a starved machine):
    // what the server sent meanwhile is still unread, so silence counts again from now. The limit
    // is ~2 s, so the default gap (2 s) would let one stall pass for silence.
    const sleeps = new SleepDetector(LIVENESS_TICK_MS, STALL_GAP_MS);
    let resumedAt = 0;
    let ticks = 0;
    this.#liveness = setInterval(() => {
      const now = Date.now();
      ticks++;
      // After a sleep, silence counts from the resume (found by the soak: every tunnel was called silent).
      if (sleeps.tick(now)) resumedAt = now;
      const phase = this.link.phase;
      if (phase === 'down') return;
      const quietMs = now - Math.max(this.link.lastReceivedAt, resumedAt);
      // Once called silent (it may drain for minutes), once a second is enough to hear it come back.
      const asking = !this.#unresponsive || ticks % SILENT_ECHO_EVERY_TICKS === 0;
      if (asking && quietMs >= limits.askAfterMs && this.#gatewayAnswers && gateway && phase === 'up') {
        // Any packet from the server ends the quiet (lastReceivedAt); an echo's own time tunes the limit.
        this.stack.ping(gateway, { timeoutMs: ECHO_TIMEOUT_MS }).then(
          (rttMs) => limits.observe(rttMs),
          () => {},
        );
      }
      const limitMs = this.#gatewayAnswers ? limits.limitMs : keepaliveLimitMs;
      // A lost transport (L1 reconnecting) is silence for sure: no need to wait for the limit.
      this.#setResponsive(!(phase === 'reconnecting' || quietMs >= limitMs), quietMs);
    }, LIVENESS_TICK_MS);
    this.#liveness.unref();
    this.link.onPhase((phase) => {
      if (phase === 'reconnecting') this.#setResponsive(false, Date.now() - this.link.lastReceivedAt);
    });
  }

  #newSilenceLimits(): SilenceLimits {
    return new SilenceLimits(
      this.#unresponsiveMs,
      LIVENESS_TICK_MS,
      this.config.transport === 'udp' ? 'datagram' : 'stream',
    );
  }

  #setResponsive(responsive: boolean, quietMs: number): void {
    if (responsive === !this.#unresponsive || this.#state === 'closed') return;
    this.#unresponsive = !responsive;
    for (const fn of [...this.#livenessHandlers]) fn(responsive, quietMs);
  }

  /** Called with false when the server goes quiet past the limit, and with true when it is heard again. */
  onLiveness(fn: (responsive: boolean, quietMs: number) => void): () => void {
    this.#livenessHandlers.add(fn);
    return () => this.#livenessHandlers.delete(fn);
  }

  get responsive(): boolean {
    return !this.#unresponsive;
  }

  /** The link as a health monitor sees it. */
  linkState(): LinkState {
    return this.link.phase;
  }

  /** One uncached DNS exchange through the tunnel, in ms. */
  measureDns(): Promise<number> {
    return this.dns.measure(this.#healthDnsName);
  }

  /** Distinct destinations connects reached and failed to reach since the last call (the health monitor's). */
  takeConnectHosts(): ConnectHostCounts {
    return this.#taps.takeConnectHosts();
  }

  /** What bulk downloads through this tunnel took since the last call, and how fast (bulk-meter.ts). */
  takeBulk(): BulkSample | null {
    return this.#taps.takeBulk();
  }

  /** Netstack TCP counters for a retransmission rate. */
  tcpCounters(): { segmentsOut: number; retransmissions: number } {
    const t = this.stack.stats.tcp;
    return { segmentsOut: t.xmit, retransmissions: t.retransmissions };
  }

  /** Counters for metrics and the health window, as the worker reports them too. */
  diagnostics(): TunnelDiagnostics {
    const { tcp, wasmMemoryBytes } = this.stack.stats;
    return {
      link: this.linkState(),
      responsive: this.responsive,
      reconnects: this.link.counters.reconnects,
      decryptFailures: this.link.counters.decryptFailures,
      segmentsOut: tcp.xmit,
      retransmissions: tcp.retransmissions,
      windowUpdatesResent: tcp.windowUpdatesResent,
      dnsHits: this.dns.stats.cacheHits,
      dnsMisses: this.dns.stats.cacheMisses,
      weakTls: this.link.weakTls,
      trustRule: this.link.trustRule,
      encryptedDns: this.dns.encrypted,
      wasmMemoryBytes,
      // In the worker this is the tunnel's own heap; on the main thread, everything's.
      heapUsedBytes: getHeapStatistics().used_heap_size,
    };
  }

  /**
   * Ready means packets get through, not just that the server pushed a config: a fresh SoftEther
   * session can drop the first packets while its virtual network comes up. Ping the tunnel's
   * gateway until it answers (a server that never answers ICMP only costs the wait).
   */
  async #waitForPath(logger: Logger, signal?: AbortSignal): Promise<void> {
    const gateway = this.config.gateway;
    if (!gateway) return;
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      signal?.throwIfAborted();
      try {
        const rttMs = await this.stack.ping(gateway, { timeoutMs: 1000 });
        this.#gatewayAnswers = true;
        this.#silence = this.#newSilenceLimits();
        this.#silence.observe(rttMs);
        return;
      } catch {
        if (this.link.phase !== 'up')
          throw new GatehopError(
            ErrorCodes.EGRESS_FAILED,
            `tunnel to ${this.nodeId} went down while checking its path`,
          );
      }
    }
    logger.warn(
      { event: 'tunnel-path-unchecked', nodeId: this.nodeId, gateway },
      'the tunnel gateway does not answer ping; using the tunnel anyway',
    );
  }

  get state(): EgressState {
    return this.#state;
  }

  /** Called once if the tunnel dies (ping-restart, server gone) or is closed. */
  onClose(fn: (reason: string) => void): () => void {
    this.#closeHandlers.add(fn);
    return () => this.#closeHandlers.delete(fn);
  }

  async resolve(host: string, opts: { signal?: AbortSignal } = {}): Promise<string[]> {
    if (isIP(host)) return [host];
    return this.dns.resolve(host, opts);
  }

  async connectTcp(host: string, port: number, opts: ConnectTcpOptions = {}): Promise<EgressTcpConnection> {
    if (this.#state === 'closed') throw new GatehopError(ErrorCodes.EGRESS_CLOSED, `egress ${this.id} is closed`);
    const started = Date.now();
    const deadline = AbortSignal.timeout(opts.timeoutMs ?? 15_000);
    const signal = opts.signal ? AbortSignal.any([opts.signal, deadline]) : deadline;
    try {
      const addresses = (await this.resolve(host, { signal })).filter((a) => isIP(a) === 4);
      if (addresses.length === 0)
        throw new GatehopError(ErrorCodes.EGRESS_DNS_NOT_FOUND, `${host}: no IPv4 address (the tunnel is IPv4 only)`);
      const stream = await this.stack.connectTcp(addresses[0]!, port, { timeoutMs: opts.timeoutMs ?? 15_000, signal });
      this.#taps.connected(host, opts);
      stream.observer = this.#taps.bulk;
      this.stats.sessionsActive++;
      this.stats.sessionsTotal++;
      stream.once('close', () => {
        this.stats.sessionsActive--;
        this.stats.bytesUp += stream.stats.bytesOut;
        this.stats.bytesDown += stream.stats.bytesIn;
      });
      return {
        stream,
        localAddress: this.stack.address,
        localPort: stream.localPort,
        remoteAddress: addresses[0]!,
        remotePort: port,
      };
    } catch (err) {
      this.#taps.connectFailed(host, err, opts, started);
      if (signal.aborted && !(err instanceof GatehopError)) throw abortReason(signal, `connect to ${host}:${port}`);
      throw err;
    }
  }

  async bindUdp(): Promise<EgressUdpSocket> {
    if (this.#state === 'closed') throw new GatehopError(ErrorCodes.EGRESS_CLOSED, `egress ${this.id} is closed`);
    return new TunnelUdpSocket(this.stack.openUdp());
  }

  #stopWatching(): void {
    if (this.#liveness) clearInterval(this.#liveness);
    this.#liveness = null;
    this.#livenessHandlers.clear();
  }

  #fail(reason: string): void {
    this.#state = 'closed';
    this.#stopWatching();
    this.dns.close();
    this.stack.close();
    // What the link opened (its socket, keep-alives, a reconnect in progress) goes with it.
    this.link.close();
    for (const fn of [...this.#closeHandlers]) fn(reason);
    this.#closeHandlers.clear();
  }

  async close(): Promise<void> {
    if (this.#state === 'closed') return;
    this.#state = 'closed';
    this.#stopWatching();
    this.dns.close();
    this.stack.close();
    this.link.close();
    for (const fn of [...this.#closeHandlers]) fn('closed');
    this.#closeHandlers.clear();
  }
}

class TunnelUdpSocket implements EgressUdpSocket {
  constructor(private readonly socket: StackUdpSocket) {}

  send(data: Buffer, address: string, port: number): void {
    this.socket.send(data, address, port);
  }

  onMessage(handler: (d: UdpDatagram) => void): void {
    this.socket.on('message', (d) => handler({ data: d.data, address: d.address, port: d.port }));
  }

  onClose(handler: (err?: Error) => void): void {
    if (this.socket.closed) handler();
    else this.socket.once('close', () => handler());
  }

  close(): void {
    this.socket.close();
  }
}
