import { isIP } from 'node:net';
import * as dnsPacket from 'dns-packet';
import { abortReason, ErrorCodes, GatehopError } from '../common/index.js';
import type { StackUdpSocket } from './udp-socket.js';

export interface DnsResolverOptions {
  /** Tried first, in order: the DNS servers the tunnel pushed. */
  servers: string[];
  /** Tried after the pushed ones (still through the tunnel). */
  fallback?: string[];
  timeoutMs?: number;
  /** Attempts per server. */
  attempts?: number;
  cacheSize?: number;
  minTtlS?: number;
  maxTtlS?: number;
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

/**
 * A stub resolver whose queries travel only through the stack's own UDP: A and AAAA asked together,
 * servers tried in order with a per-query timeout and retries, answers cached for their TTL.
 */
export class DnsResolver {
  readonly stats = { queries: 0, cacheHits: 0, cacheMisses: 0, timeouts: 0, failures: 0 };
  readonly #stack: UdpOpener;
  readonly #servers: string[];
  readonly #timeoutMs: number;
  readonly #attempts: number;
  readonly #cacheSize: number;
  readonly #minTtlS: number;
  readonly #maxTtlS: number;
  readonly #cache = new Map<string, CacheEntry>();
  readonly #inflight = new Map<string, Promise<string[]>>();
  #nextQueryId = Math.floor(Math.random() * 0xffff);

  constructor(stack: UdpOpener, opts: DnsResolverOptions) {
    this.#stack = stack;
    this.#servers = [...new Set([...opts.servers, ...(opts.fallback ?? [])])].filter((s) => isIP(s) === 4);
    this.#timeoutMs = opts.timeoutMs ?? 2_000;
    this.#attempts = opts.attempts ?? 2;
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
      if (cached.addresses.length === 0) throw new GatehopError(ErrorCodes.EGRESS_DNS_NOT_FOUND, `${name}: no such host (cached)`);
      return cached.addresses;
    }
    this.stats.cacheMisses++;
    let pending = this.#inflight.get(key);
    if (!pending) {
      pending = this.#lookup(key).finally(() => this.#inflight.delete(key));
      this.#inflight.set(key, pending);
    }
    if (!opts.signal) return pending;
    opts.signal.throwIfAborted();
    return new Promise((resolve, reject) => {
      const onAbort = (): void => reject(abortReason(opts.signal!, `resolve ${name}`));
      opts.signal!.addEventListener('abort', onAbort, { once: true });
      pending.then(resolve, reject).finally(() => opts.signal!.removeEventListener('abort', onAbort));
    });
  }

  /**
   * One uncached exchange with the first server, timed: a health sample of the path. An answer that
   * says "no such name" still counts (the server answered).
   */
  async measure(name: string): Promise<number> {
    const server = this.#servers[0];
    if (!server) throw new GatehopError(ErrorCodes.EGRESS_DNS_NOT_FOUND, 'no DNS server known for this tunnel');
    const started = performance.now();
    await this.#ask(server, name.toLowerCase());
    return performance.now() - started;
  }

  async #lookup(name: string): Promise<string[]> {
    if (this.#servers.length === 0) throw new GatehopError(ErrorCodes.EGRESS_DNS_NOT_FOUND, `resolve ${name}: no DNS server known for this tunnel`);
    let lastError: Error | null = null;
    for (const server of this.#servers) {
      for (let attempt = 0; attempt < this.#attempts; attempt++) {
        try {
          const { addresses, ttlS } = await this.#ask(server, name);
          this.#remember(name, addresses, addresses.length > 0 ? ttlS : NEGATIVE_TTL_S);
          if (addresses.length === 0) throw new GatehopError(ErrorCodes.EGRESS_DNS_NOT_FOUND, `${name}: no such host (server ${server})`);
          return addresses;
        } catch (err) {
          if (err instanceof GatehopError && err.code === ErrorCodes.EGRESS_DNS_NOT_FOUND) throw err;
          lastError = err as Error;
        }
      }
    }
    this.stats.failures++;
    throw lastError ?? new GatehopError(ErrorCodes.DNS_TIMEOUT, `resolve ${name}: no answer`);
  }

  /** One exchange with one server: A and AAAA on one socket, answered or timed out together. */
  #ask(server: string, name: string): Promise<{ addresses: string[]; ttlS: number }> {
    const socket = this.#stack.openUdp();
    const idA = this.#queryId();
    const idAAAA = this.#queryId();
    const answers = new Map<number, { addresses: string[]; ttl: number; rcode: number }>();
    return new Promise<{ addresses: string[]; ttlS: number }>((resolve, reject) => {
      const finish = (): void => {
        clearTimeout(timer);
        socket.close();
      };
      const timer = setTimeout(() => {
        finish();
        this.stats.timeouts++;
        const partial = answers.get(idA);
        if (partial && partial.addresses.length > 0) resolve({ addresses: partial.addresses, ttlS: partial.ttl });
        else reject(new GatehopError(ErrorCodes.DNS_TIMEOUT, `resolve ${name}: ${server} did not answer within ${this.#timeoutMs} ms`));
      }, this.#timeoutMs);
      socket.on('message', (d) => {
        if (d.address !== server || d.port !== 53) return; // only the server we asked may answer
        let packet: dnsPacket.Packet;
        try {
          packet = dnsPacket.decode(d.data);
        } catch {
          return; // garbage is dropped; the timeout still bounds us
        }
        if (packet.type !== 'response' || (packet.id !== idA && packet.id !== idAAAA) || answers.has(packet.id!)) return;
        const want = packet.id === idA ? 'A' : 'AAAA';
        const records = (packet.answers ?? []).filter((a): a is dnsPacket.StringAnswer => a.type === want);
        answers.set(packet.id!, {
          addresses: records.map((r) => r.data).filter((ip) => isIP(ip) !== 0),
          ttl: records.reduce((min, r) => Math.min(min, r.ttl ?? this.#maxTtlS), this.#maxTtlS),
          rcode: (packet.flags ?? 0) & 0x0f, // RFC 1035 §4.1.1: 2 SERVFAIL, 3 NXDOMAIN
        });
        if (answers.size === 2) {
          finish();
          const a = answers.get(idA)!;
          const aaaa = answers.get(idAAAA)!;
          if (a.rcode === 2 && aaaa.rcode === 2) {
            reject(new GatehopError(ErrorCodes.EGRESS_FAILED, `resolve ${name}: ${server} answered SERVFAIL`));
            return;
          }
          resolve({ addresses: [...a.addresses, ...aaaa.addresses], ttlS: Math.min(a.ttl, aaaa.ttl) });
        }
      });
      this.stats.queries += 2;
      const q = (id: number, type: 'A' | 'AAAA'): Buffer =>
        dnsPacket.encode({ type: 'query', id, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type, name }] });
      if (!socket.send(q(idA, 'A'), server, 53) || !socket.send(q(idAAAA, 'AAAA'), server, 53)) {
        finish();
        reject(new GatehopError(ErrorCodes.EGRESS_NETWORK_UNREACHABLE, `resolve ${name}: cannot send to ${server}`));
      }
    });
  }

  #queryId(): number {
    this.#nextQueryId = (this.#nextQueryId + 1) & 0xffff;
    return this.#nextQueryId;
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
