/**
 * Names of UDP targets resolved for one association's leg (the tunnel's, or the host's for DIRECT):
 * answers kept (bounded), and a burst of datagrams to a name not known yet waits on **one** lookup
 * (at most `maxWaiting` datagrams a name, `maxLookups` names at once; past that a datagram is
 * dropped, as UDP may). Before (#45) the DIRECT leg started a lookup per datagram, unbounded.
 */
export interface NameLookupsOptions {
  resolve(host: string): Promise<string[]>;
  maxCached?: number;
  maxLookups?: number;
  maxWaiting?: number;
  /** Called for each datagram given up (no room to wait, no answer, a failed lookup). */
  onDrop(host: string, why: 'full' | 'no-answer' | 'failed', err?: Error): void;
}

export class NameLookups {
  readonly #o: Required<Omit<NameLookupsOptions, 'resolve' | 'onDrop'>> & NameLookupsOptions;
  readonly #cache = new Map<string, string>();
  readonly #waiting = new Map<string, Array<(ip: string) => void>>();
  #closed = false;

  constructor(o: NameLookupsOptions) {
    this.#o = { maxCached: 256, maxLookups: 32, maxWaiting: 16, ...o };
  }

  /** Lookups in flight now. */
  get pending(): number {
    return this.#waiting.size;
  }

  /** Calls `send` with the name's address: now if known, else once its one lookup answers. */
  with(host: string, send: (ip: string) => void): void {
    if (this.#closed) return;
    const ip = this.#cache.get(host);
    if (ip) return send(ip);
    const waiting = this.#waiting.get(host);
    if (waiting) {
      if (waiting.length < this.#o.maxWaiting) waiting.push(send);
      else this.#o.onDrop(host, 'full');
      return;
    }
    if (this.#waiting.size >= this.#o.maxLookups) return this.#o.onDrop(host, 'full');
    const list = [send];
    this.#waiting.set(host, list);
    this.#o.resolve(host).then(
      (addresses) => {
        this.#waiting.delete(host);
        if (this.#closed) return;
        const first = addresses[0];
        if (!first) {
          for (let i = 0; i < list.length; i++) this.#o.onDrop(host, 'no-answer');
          return;
        }
        if (this.#cache.size >= this.#o.maxCached) this.#cache.clear();
        this.#cache.set(host, first);
        for (const s of list) s(first);
      },
      (err: Error) => {
        this.#waiting.delete(host);
        if (this.#closed) return;
        for (let i = 0; i < list.length; i++) this.#o.onDrop(host, 'failed', err);
      },
    );
  }

  /** Forgets every answer (the leg's egress changed: names are resolved by the egress that carries them). */
  clear(): void {
    this.#cache.clear();
  }

  /** Datagrams still waiting are given up silently (the association is closing). */
  close(): void {
    this.#closed = true;
    this.#cache.clear();
  }
}
