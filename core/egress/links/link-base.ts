import { type Logger } from '../../common/index.js';
import { parseUpstreamUrl, type TrustRule, type UpstreamProxy } from '../../reach/index.js';
import type { LinkPhase, TunnelLink } from '../tunnel-link.js';
import type { TunnelProtocol } from '../tunnel-link.js';

/** What opening any link takes besides its spec. */
export interface LinkOpenOptions {
  logger: Logger;
  timeoutMs: number;
  signal?: AbortSignal;
}

/** A spec's upstream proxy (a URL string, so it crosses into a worker) as the dialers take it. */
export function upstreamOf(spec: { upstreamUrl?: string }): UpstreamProxy | null {
  return spec.upstreamUrl ? parseUpstreamUrl(spec.upstreamUrl) : null;
}

/**
 * What the three protocols' links share: the handlers of phase changes and of the link's end, and
 * the promise that `onDown` is called once, with the reason of the link's end (a client may report
 * its end more than once as it winds down). The end is the client's own terminal state (`ended`),
 * not any 'down' phase: OpenVPN's and SSTP's clients report each step of a handshake (the first
 * one, and OpenVPN's L1 reconnect's) with phase 'down'. Counting the first of those as the end left
 * the real end untold, so a node killed under an SSTP tunnel was not left for a minute (#44's
 * soak); counting any of them would end a tunnel in the middle of an L1 reconnect. An end is told
 * only after the link has been up: a failed open is reported by the open. A protocol's link says
 * how its client reports a change by calling `changed(reason)`, answers `phase` and `ended` from
 * its client, and says to the constructor when it is built already up (SE-VPN's).
 */
export abstract class LinkBase implements TunnelLink {
  abstract readonly protocol: TunnelProtocol;
  abstract readonly phase: LinkPhase;
  abstract readonly lastReceivedAt: number;
  abstract readonly trustRule: TrustRule | null;
  /** The client has ended for good (its terminal state); by default, the phase is down. */
  get ended(): boolean {
    return this.phase === 'down';
  }
  /** Protocols without an L1 reconnect or a legacy-TLS fallback keep these. */
  get counters(): { reconnects: number; decryptFailures: number } {
    return { reconnects: 0, decryptFailures: 0 };
  }
  get weakTls(): boolean {
    return false;
  }
  readonly #phaseHandlers: Array<(phase: LinkPhase) => void> = [];
  readonly #downHandlers: Array<(reason: string) => void> = [];
  #downSaid = false;
  #beenUp: boolean;

  constructor(startsUp = false) {
    this.#beenUp = startsUp;
  }

  abstract write(packet: Buffer): void;
  abstract close(): void;
  abstract onPackets(fn: (packets: Buffer[]) => void): void;

  onDown(fn: (reason: string) => void): void {
    this.#downHandlers.push(fn);
  }

  onPhase(fn: (phase: LinkPhase) => void): void {
    this.#phaseHandlers.push(fn);
  }

  /** No L1 reconnect: nothing to report (OpenVPN's link overrides this). */
  onReconnected(_fn: (e: { address: string; addressChanged: boolean }) => void): void {}

  /** The client reported a change: every phase listener hears the phase, and the end (after up) is told once. */
  protected changed(reason: string): void {
    const phase = this.phase;
    if (phase === 'up') this.#beenUp = true;
    for (const fn of this.#phaseHandlers) fn(phase);
    if (!this.ended || this.#downSaid || !this.#beenUp) return;
    this.#downSaid = true;
    for (const fn of this.#downHandlers) fn(reason);
  }
}
