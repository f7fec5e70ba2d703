import { ErrorCodes, GatehopError, type Logger } from '../common/index.js';
import { type EgressManager, egressDialer } from '../egress/index.js';
import type { SwitchPolicy } from '../health/index.js';
import { defaultExpectedStatus, urlTest, type RankedNode, type Selector } from '../selector/index.js';
import type { VpnGateNode } from '../vpngate/index.js';
import type { GroupOptions } from './options.js';
import type { NodeOpener, NodeTunnel } from './types.js';

export interface UrlTestsDeps {
  selector: Selector;
  manager: EgressManager;
  nodes: () => readonly VpnGateNode[];
  open: NodeOpener;
  options: () => GroupOptions;
  /** Tunnels already up that a delay test may use (active, standby). */
  held: () => ReadonlyArray<NodeTunnel | undefined>;
  tunnelId: () => string;
  onResult: (nodeId: string, ms: number | null) => void;
  signal: AbortSignal;
  logger: Logger;
}

/**
 * The URL-test group's measurements (sing-box urltest): a timed HTTP request through a tunnel,
 * per node the latest delay and RTT, and the rule for a clearly better node (anti-flap margin
 * on the score AND faster by more than the tolerance).
 */
export class UrlTests {
  /** The latest URL-test delay per node (ms; null = failed). */
  readonly delays = new Map<string, { ms: number | null; at: number }>();
  /** The latest RTT per node from its probes or URL tests (ms), for the lowest-latency strategy. */
  readonly rtt = new Map<string, number>();

  constructor(private readonly deps: UrlTestsDeps) {}

  /** One URL test through a held tunnel; the result feeds the node's history. */
  async test(h: { node: VpnGateNode; egress: NodeTunnel }): Promise<void> {
    const { url, timeoutMs } = this.deps.options().urlTest;
    let ms: number | null = null;
    try {
      ms = await urlTest(egressDialer(h.egress), url, {
        timeoutMs,
        signal: this.deps.signal,
        ...this.#expected(url),
      });
      this.deps.selector.recordSuccess(h.node.id, { urlMs: ms });
      this.rtt.set(h.node.id, ms);
    } catch (err) {
      if (this.deps.signal.aborted) return;
      this.deps.selector.recordFailure(h.node.id, 'url');
      this.deps.logger.info(
        { event: 'url-test-failed', nodeId: h.node.id, err: (err as Error).message },
        `URL test through ${h.node.id} failed`,
      );
    }
    this.delays.set(h.node.id, { ms, at: Date.now() });
    this.deps.onResult(h.node.id, ms);
  }

  /**
   * A URL test through one node (Clash's /proxies/:name/delay): through its tunnel if one is up
   * (active, standby or draining), else through a tunnel opened for the test and closed after.
   */
  async delayTest(nodeId: string, url: string, timeoutMs: number): Promise<number> {
    const node = this.deps.nodes().find((n) => n.id === nodeId);
    if (!node) throw new GatehopError(ErrorCodes.NODE_UNKNOWN, `no node ${nodeId} in the pool`);
    const open = [...this.deps.held(), ...this.deps.manager.draining.map((d) => d.egress as NodeTunnel)].find(
      (e) => e && e.nodeId === nodeId && e.state !== 'closed',
    );
    const signal = AbortSignal.any([AbortSignal.timeout(timeoutMs), this.deps.signal]);
    const egress = open ?? (await this.deps.open(node, { signal, timeoutMs, id: this.deps.tunnelId() }));
    try {
      const ms = await urlTest(egressDialer(egress), url, {
        timeoutMs,
        signal,
        ...this.#expected(url),
      });
      this.delays.set(nodeId, { ms, at: Date.now() });
      this.deps.onResult(nodeId, ms);
      return ms;
    } finally {
      if (!open) await egress.close();
    }
  }

  /**
   * Why `candidate` should replace `current`, or null: it scores clearly better (anti-flap margin)
   * AND is faster by more than the tolerance: by URL test when both were tested, else by probe RTT.
   */
  better(candidate: RankedNode, current: RankedNode, policy: SwitchPolicy): string | null {
    if (!policy.isClearlyBetter(candidate.terms.total, current.terms.total)) return null;
    const tol = this.deps.options().urlTest.toleranceMs;
    const urlC = this.delays.get(candidate.node.id)?.ms;
    const urlA = this.delays.get(current.node.id)?.ms;
    const [c, a, how] =
      urlC != null && urlA != null ? [urlC, urlA, 'URL test'] : [candidate.terms.rttMs, current.terms.rttMs, 'probe'];
    if (c === null || a === null || a - c <= tol) return null;
    return `better node ${candidate.node.id}: score ${candidate.terms.total.toFixed(1)} vs ${current.terms.total.toFixed(1)}, ${how} ${Math.round(c)} vs ${Math.round(a)} ms`;
  }

  /** The URL test checks the configured status, 204 for a generate_204 URL, else any 2xx. */
  #expected(url: string): { expectedStatus?: number } {
    const configured = this.deps.options().urlTest.expectedStatus;
    if (configured !== undefined) return { expectedStatus: configured };
    return /generate_204(\?|$)/.test(url) ? { expectedStatus: defaultExpectedStatus(url) } : {};
  }
}
