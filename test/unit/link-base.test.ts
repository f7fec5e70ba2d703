import { describe, expect, it } from 'vitest';
import { LinkBase } from '../../core/egress/links/link-base.js';
import type { LinkPhase } from '../../core/egress/index.js';

/** A link whose client is this test: it sets the phase (and, like OpenVPN's, whether it ended) and reports the change. */
class ScriptedLink extends LinkBase {
  readonly protocol = 'sstp' as const;
  readonly lastReceivedAt = 0;
  readonly trustRule = null;
  phase: LinkPhase;
  constructor(startsUp = true) {
    super(startsUp);
    this.phase = startsUp ? 'up' : 'down';
  }
  write(): void {}
  close(): void {}
  onPackets(): void {}
  #terminal: boolean | null = null;
  override get ended(): boolean {
    return this.#terminal ?? super.ended;
  }
  report(phase: LinkPhase, reason: string): void {
    this.phase = phase;
    this.changed(reason);
  }
  /** As OpenVPN's and SSTP's links: the phase, and whether the client is in its terminal state. */
  state(phase: LinkPhase, terminal: boolean, reason: string): void {
    this.#terminal = terminal;
    this.report(phase, reason);
  }
}

describe('LinkBase: what the three protocols share (#47)', () => {
  it('tells every phase change, and the end once with the first reason, however often the client reports it', () => {
    const link = new ScriptedLink();
    const phases: LinkPhase[] = [];
    const downs: string[] = [];
    link.onPhase((p) => phases.push(p));
    link.onDown((r) => downs.push(r));
    link.report('reconnecting', 'carrier lost');
    link.report('up', 'reconnected');
    link.report('down', 'server went away');
    link.report('down', 'closed');
    expect(phases).toEqual(['reconnecting', 'up', 'down', 'down']);
    expect(downs).toEqual(['server went away']);
    expect(link.counters).toEqual({ reconnects: 0, decryptFailures: 0 });
    expect(link.weakTls).toBe(false);
  });

  it('a link still connecting (its phase down at each handshake step) is not ended by it: the end after up is told (#44)', () => {
    // OpenVPN's and SSTP's clients report every step of the handshake; their phase is down until up.
    const link = new ScriptedLink(false);
    const downs: string[] = [];
    link.onDown((r) => downs.push(r));
    link.state('down', false, 'dialling');
    link.state('down', false, 'TLS handshake');
    expect(downs).toEqual([]);
    link.state('up', false, 'IPv4 192.168.30.10');
    link.state('down', true, 'rig-node3 closed the SSTP connection');
    link.state('down', true, 'closed');
    expect(downs).toEqual(['rig-node3 closed the SSTP connection']);
  });

  it("an L1 reconnect's handshake steps (phase down, not terminal) do not end the link; its giving up does", () => {
    const link = new ScriptedLink(false);
    const downs: string[] = [];
    link.onDown((r) => downs.push(r));
    link.state('up', false, 'connected');
    link.state('reconnecting', false, 'carrier lost');
    link.state('down', false, 'opening transport');
    link.state('up', false, 'reconnected');
    expect(downs).toEqual([]);
    link.state('reconnecting', false, 'carrier lost');
    link.state('down', true, 'reconnect gave up after 30 s');
    expect(downs).toEqual(['reconnect gave up after 30 s']);
  });

  it('a link made already up (SE-VPN, from an open session) tells its first down', () => {
    const link = new ScriptedLink(true);
    const downs: string[] = [];
    link.onDown((r) => downs.push(r));
    link.report('down', 'the hub ended the session');
    expect(downs).toEqual(['the hub ended the session']);
  });
});
