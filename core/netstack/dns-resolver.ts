import { randomInt } from 'node:crypto';
import { isIP } from 'node:net';
import * as dnsPacket from 'dns-packet';
import { ErrorCodes, GatehopError, waitAbortably } from '../common/index.js';
import type { DohTransport } from './doh-transport.js';
import type { StackUdpSocket } from './udp-socket.js';

export interface DnsResolverOptions {
  /** Tried first, in order: the DNS servers the tunnel pushed. */
  servers: string[];
  /** Asked too from the second round on (still through the tunnel). */
  fallback?: string[];
  /** The first retransmission comes after this; each later one after twice the previous gap. */
  timeoutMs?: number;
  /** A lookup gives up after this (late answers to any earlier query count until then). */
  lookupTimeoutMs?: number;
  cacheSize?: number;
  minTtlS?: number;
  maxTtlS?: number;
  /**
   * Every lookup by DNS over HTTPS through the same stack instead (privacy.encryptedDns): no UDP
   * query goes to `servers` at all, the node's resolver sees nothing.
   */
  doh?: DohTransport;
}

interface CacheEntry {
  addresses: string[];
  expiresAt: number;
}

/** What the resolver needs of a stack: UDP sockets on it (so no query ever leaves the tunnel). */
export interface UdpOpener {
  openUdp(): StackUdpSocket;
}

const NEGATIVE_TTL_S = 30;

interface Answer {
  addresses: string[];
  ttl: number;
  rcode: number;
}

/**
 * A stub resolver whose queries travel only through the stack's own UDP: A and AAAA asked together,
 * answers cached for their TTL. A lookup asks the first (pushed) server at once and again after 1,
 * 3, 7 s, adding the next server at each round, and takes the first complete answer from any of
 * them until its deadline: a server slowed by a busy tunnel still counts when its answer comes late.
 */
export class DnsResolver {
  readonly stats = { queries: 0, cacheHits: 0, cacheMisses: 0, timeouts: 0, failures: 0 };
  readonly #stack: UdpOpener;
  readonly #servers: string[];
  readonly #firstGapMs: number;
  readonly #lookupMs: number;
  readonly #cacheSize: number;
  readonly #minTtlS: number;
  readonly #maxTtlS: number;
  readonly #cache = new Map<string, CacheEntry>();
  readonly #inflight = new Map<string, Promise<string[]>>();
  readonly #doh: DohTransport | null;

  /** Every lookup goes by DNS over HTTPS (privacy.encryptedDns): no query reaches the node's resolver. */
  get encrypted(): boolean {
    return this.#doh !== null;
  }

  constructor(stack: UdpOpener, opts: DnsResolverOptions) {
    this.#stack = stack;
    this.#doh = opts.doh ?? null;
    this.#servers = [...new Set([...opts.servers, ...(opts.fallback ?? [])])].filter((s) => isIP(s) === 4);
    this.#firstGapMs = opts.timeoutMs ?? 1_000;
    this.#lookupMs = opts.lookupTimeoutMs ?? 10_000;
    this.#cacheSize = opts.cacheSize ?? 1024;
    this.#minTtlS = opts.minTtlS ?? 5;
    this.#maxTtlS = opts.maxTtlS ?? 3600;
  }

  /** IPv4 addresses first, then IPv6. Rejects with GH_ERR_EGRESS_DNS_NOT_FOUND or GH_ERR_DNS_TIMEOUT. */
  async resolve(name: string, opts: { signal?: AbortSignal } = {}): Promise<string[]> {
    if (isIP(name)) return [name];
    const key = name.toLowerCase().replace(/\.$/, '');
    if (!/^[a-z0-9_.-]{1,253}$/.test(key) || key.split('.').some((l) => l.length === 0 || l.length > 63)) {
      throw new GatehopError(ErrorCodes.EGRESS_DNS_NOT_FOUND, `"${name}" is not a valid host name`);
    }
    const cached = this.#cache.get(key);
    if (cached && cached.expiresAt > Date.now()) {
      this.stats.cacheHits++;
      if (cached.addresses.length === 0)
        throw new GatehopError(ErrorCodes.EGRESS_DNS_NOT_FOUND, `${name}: no such host (cached)`);
      return cached.addresses;
    }
    this.stats.cacheMisses++;
    let pending = this.#inflight.get(key);
    if (!pending) {
      pending = this.#lookup(key).finally(() => this.#inflight.delete(key));
      this.#inflight.set(key, pending);
    }
    // The lookup is shared by every caller of this name: an abort ends this caller's wait only.
    return waitAbortably(pending, opts.signal, `resolve ${name}`);
  }

  /**
   * One uncached exchange with the first server, timed: a health sample of the path. An answer that
   * says "no such name" still counts (the server answered).
   */
  async measure(name: string): Promise<number> {
    if (this.#doh) {
      const started = performance.now();
      await this.#exchangeDoh(name.toLowerCase(), 2 * this.#firstGapMs);
      return performance.now() - started;
    }
    const server = this.#servers[0];
    if (!server) throw new GatehopError(ErrorCodes.EGRESS_DNS_NOT_FOUND, 'no DNS server known for this tunnel');
    const started = performance.now();
    await this.#exchange(name.toLowerCase(), [server], 2 * this.#firstGapMs, false);
    return performance.now() - started;
  }

  async #lookup(name: string): Promise<string[]> {
    if (this.#doh) {
      const { addresses, ttlS, server } = await this.#exchangeDoh(name, this.#lookupMs);
      this.#remember(name, addresses, addresses.length > 0 ? ttlS : NEGATIVE_TTL_S);
      if (addresses.length === 0)
        throw new GatehopError(ErrorCodes.EGRESS_DNS_NOT_FOUND, `${name}: no such host (${server})`);
      return addresses;
    }
    if (this.#servers.length === 0)
      throw new GatehopError(ErrorCodes.EGRESS_DNS_NOT_FOUND, `resolve ${name}: no DNS server known for this tunnel`);
    try {
      const { addresses, ttlS, server } = await this.#exchange(name, this.#servers, this.#lookupMs, true);
      this.#remember(name, addresses, addresses.length > 0 ? ttlS : NEGATIVE_TTL_S);
      if (addresses.length === 0)
        throw new GatehopError(ErrorCodes.EGRESS_DNS_NOT_FOUND, `${name}: no such host (server ${server})`);
      return addresses;
    } catch (err) {
      if (!(err instanceof GatehopError && err.code === ErrorCodes.EGRESS_DNS_NOT_FOUND)) this.stats.failures++;
      throw err;
    }
  }

  /**
   * Asks `servers` for A and AAAA on one socket: the first at once, then in rounds (after the first
   * gap, then doubling), each round asking the first server again and one more. Every query stays
   * answerable until `deadlineMs`; the first server to answer both questions wins. Without
   * `retransmit`, one round only.
   */
  #exchange(
    name: string,
    servers: string[],
    deadlineMs: number,
    retransmit: boolean,
  ): Promise<{ addresses: string[]; ttlS: number; server: string }> {
    const socket = this.#stack.openUdp();
    /** Query id → which server and which question. */
    const sent = new Map<number, { server: string; type: 'A' | 'AAAA' }>();
    const answers = new Map<string, { A?: Answer; AAAA?: Answer }>();
    const servfail = new Set<string>();
    const asked = new Set<string>();
    const timers: NodeJS.Timeout[] = [];
    return new Promise((resolve, reject) => {
      let done = false;
      const finish = (): boolean => {
        if (done) return false;
        done = true;
        for (const t of timers) clearTimeout(t);
        socket.close();
        return true;
      };
      const ask = (server: string): void => {
        for (const type of ['A', 'AAAA'] as const) {
          const id = this.#queryId(sent);
          sent.set(id, { server, type });
          asked.add(server);
          this.stats.queries++;
          const q = dnsPacket.encode({
            type: 'query',
            id,
            flags: dnsPacket.RECURSION_DESIRED,
            questions: [{ type, name }],
          });
          if (!socket.send(q, server, 53) && finish()) {
            reject(
              new GatehopError(ErrorCodes.EGRESS_NETWORK_UNREACHABLE, `resolve ${name}: cannot send to ${server}`),
            );
            return;
          }
        }
      };
      const round = (k: number): void => {
        for (const server of servers.slice(0, k + 1)) if (!done && !servfail.has(server)) ask(server);
      };
      round(0);
      if (retransmit) {
        for (let k = 1, at = this.#firstGapMs, gap = this.#firstGapMs; at < deadlineMs; k++, gap *= 2, at += gap) {
          const kk = k;
          timers.push(setTimeout(() => round(kk), at));
        }
      }
      timers.push(
        setTimeout(() => {
          if (!finish()) return;
          this.stats.timeouts++;
          // A server that answered A but not AAAA in time is good enough.
          for (const [server, a] of answers)
            if (a.A && a.A.addresses.length > 0) return resolve({ addresses: a.A.addresses, ttlS: a.A.ttl, server });
          const silent = [...asked].filter((s) => !servfail.has(s)).join(', ');
          const failed = servfail.size > 0 ? `; ${[...servfail].join(', ')} answered SERVFAIL` : '';
          reject(
            new GatehopError(
              ErrorCodes.DNS_TIMEOUT,
              `resolve ${name}: no answer from ${silent} within ${deadlineMs} ms${failed}`,
            ),
          );
        }, deadlineMs),
      );
      for (const t of timers) t.unref();
      socket.on('message', (d) => {
        let packet: dnsPacket.Packet;
        try {
          packet = dnsPacket.decode(d.data);
        } catch {
          return; // garbage is dropped; the deadline still bounds us
        }
        const q = packet.id === undefined ? undefined : sent.get(packet.id);
        // Only the server a query went to may answer it, and only once.
        if (done || packet.type !== 'response' || !q || d.address !== q.server || d.port !== 53) return;
        sent.delete(packet.id!);
        const records = (packet.answers ?? []).filter((a): a is dnsPacket.StringAnswer => a.type === q.type);
        const entry = answers.get(q.server) ?? {};
        entry[q.type] ??= {
          addresses: records.map((r) => r.data).filter((ip) => isIP(ip) !== 0),
          ttl: records.reduce((min, r) => Math.min(min, r.ttl ?? this.#maxTtlS), this.#maxTtlS),
          rcode: (packet.flags ?? 0) & 0x0f, // RFC 1035 §4.1.1: 2 SERVFAIL, 3 NXDOMAIN
        };
        answers.set(q.server, entry);
        if (!entry.A || !entry.AAAA) return;
        if (entry.A.rcode === 2 && entry.AAAA.rcode === 2) {
          // This server cannot help; the others (asked in later rounds) still may.
          servfail.add(q.server);
          if (servers.every((s) => servfail.has(s)) && finish())
            reject(
              new GatehopError(ErrorCodes.EGRESS_FAILED, `resolve ${name}: ${servers.join(', ')} answered SERVFAIL`),
            );
          return;
        }
        if (finish())
          resolve({
            addresses: [...entry.A.addresses, ...entry.AAAA.addresses],
            ttlS: Math.min(entry.A.ttl, entry.AAAA.ttl),
            server: q.server,
          });
      });
    });
  }

  /** Ends the DNS-over-HTTPS connection, if any (the stack's own sockets end with the stack). */
  close(): void {
    this.#doh?.close();
  }

  /** A and AAAA by DNS over HTTPS (the transport tries its resolvers in turn). */
  async #exchangeDoh(name: string, deadlineMs: number): Promise<{ addresses: string[]; ttlS: number; server: string }> {
    const signal = AbortSignal.timeout(deadlineMs);
    const ask = async (type: 'A' | 'AAAA'): Promise<Answer> => {
      this.stats.queries++;
      const q = dnsPacket.encode({
        type: 'query',
        id: 0,
        flags: dnsPacket.RECURSION_DESIRED,
        questions: [{ type, name }],
      });
      const packet = dnsPacket.decode(await this.#doh!.query(q, signal));
      const records = (packet.answers ?? []).filter((a): a is dnsPacket.StringAnswer => a.type === type);
      return {
        addresses: records.map((r) => r.data).filter((ip) => isIP(ip) !== 0),
        ttl: records.reduce((min, r) => Math.min(min, r.ttl ?? this.#maxTtlS), this.#maxTtlS),
        rcode: (packet.flags ?? 0) & 0x0f,
      };
    };
    try {
      const [a, aaaa] = await Promise.all([ask('A'), ask('AAAA')]);
      return {
        addresses: [...a.addresses, ...aaaa.addresses],
        ttlS: Math.min(a.ttl, aaaa.ttl),
        server: 'DNS over HTTPS',
      };
    } catch (err) {
      if (signal.aborted) {
        this.stats.timeouts++;
        throw new GatehopError(
          ErrorCodes.DNS_TIMEOUT,
          `resolve ${name}: no DNS-over-HTTPS answer within ${deadlineMs} ms`,
        );
      }
      throw err;
    }
  }

  /** A random id not in use by this lookup (predictable ids would help an off-path spoofer). */
  #queryId(inUse: Map<number, unknown>): number {
    for (;;) {
      const id = randomInt(0x10000);
      if (!inUse.has(id)) return id;
    }
  }

  #remember(name: string, addresses: string[], ttlS: number): void {
    const ttl = Math.min(this.#maxTtlS, Math.max(this.#minTtlS, ttlS));
    if (this.#cache.size >= this.#cacheSize) {
      const oldest = this.#cache.keys().next().value;
      if (oldest !== undefined) this.#cache.delete(oldest);
    }
    this.#cache.set(name, { addresses, expiresAt: Date.now() + ttl * 1000 });
  }
}
