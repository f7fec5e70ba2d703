import type { Duplex } from 'node:stream';

/**
 * Holds a freshly connected session before its relay starts, until the first byte is ready in
 * either direction or either side ends. Until then nothing has been read, so the upstream can still
 * be swapped for another one (zero-progress retry on a new egress) without the client noticing.
 * `commit` then hands both streams to the relay for life.
 *
 * It only listens for 'readable' (which also fires at EOF) and never reads; once the listener is
 * removed, the relay's pipe() makes the stream flow again with nothing lost.
 */
export class FirstByteGate {
  #upstream: Duplex | null = null;
  #clientReady = false;
  #done = false;

  constructor(
    private readonly client: Duplex,
    upstream: Duplex,
    private readonly commit: (upstream: Duplex) => void,
  ) {
    client.on('readable', this.#onClient);
    this.attach(upstream);
  }

  /** Still uncommitted: no byte has moved, the upstream may be replaced. */
  get open(): boolean {
    return !this.#done;
  }

  /** Takes the current upstream away (the caller destroys it) while a replacement is dialled. */
  detach(): Duplex | null {
    const u = this.#upstream;
    if (u) this.#unwatch(u);
    this.#upstream = null;
    return u;
  }

  /** The replacement upstream; if the client has already sent something the relay starts now. */
  attach(upstream: Duplex): void {
    if (this.#done) throw new Error('FirstByteGate: attach after commit');
    this.#upstream = upstream;
    upstream.on('readable', this.#onUpstream);
    // An upstream that dies before its first byte is the relay's to report (pipeline sees it closed).
    upstream.once('close', this.#onUpstream);
    if (this.#clientReady) this.#finish();
  }

  #onClient = (): void => {
    this.#clientReady = true;
    if (this.#upstream) this.#finish();
  };

  #onUpstream = (): void => this.#finish();

  #unwatch(u: Duplex): void {
    u.off('readable', this.#onUpstream);
    u.off('close', this.#onUpstream);
  }

  #finish(): void {
    if (this.#done || !this.#upstream) return;
    this.#done = true;
    this.client.off('readable', this.#onClient);
    this.#unwatch(this.#upstream);
    this.commit(this.#upstream);
  }

  /** The session ended before committing. */
  cancel(): void {
    if (this.#done) return;
    this.#done = true;
    this.client.off('readable', this.#onClient);
    if (this.#upstream) this.#unwatch(this.#upstream);
  }
}
