import { Listeners, type Logger } from '../common/index.js';
import type { TunnelProtocol } from '../egress/index.js';

/** What this node did with each protocol: tried, worked, the last outcome. */
export interface NodeProtocolRecord {
  tried: number;
  worked: number;
  lastOk: boolean | null;
  lastError: string | null;
  at: number;
}

export interface ProtocolChoiceOptions {
  /** The order a node's protocols are tried in (config tunnel.protocols). */
  order: readonly TunnelProtocol[];
  /**
   * The user's own order for some nodes (config tunnel.nodeProtocols), replacing `order` for them.
   * What the network taught does not reorder it: the user chose for that node.
   */
  nodeOrders?: Readonly<Record<string, readonly TunnelProtocol[]>>;
  /** Learn which protocol this network lets through (config tunnel.learnProtocol). */
  learn: boolean;
  /** Distinct nodes a protocol must fail on, with another one working, before it goes last. */
  threshold?: number;
}

/**
 * What a network taught: the protocol to try first, the one found not to get through (null when
 * none), and why in words.
 */
export interface ProtocolLesson {
  preferred: TunnelProtocol | null;
  /** Absent in what older versions saved. */
  blocked?: TunnelProtocol | null;
  reason: string;
}

/** A change of what this network needs first (null: back to the configured order). */
export interface ProtocolLearned {
  preferred: TunnelProtocol | null;
  blocked: TunnelProtocol | null;
  reason: string;
}

/** What a network taught, kept per network (the store's settings, keyed by the network). */
export interface ProtocolMemory {
  load(network: string): ProtocolLesson | null;
  save(network: string, v: ProtocolLesson): void;
}

interface Evidence {
  /** Nodes whose latest attempt with the protocol failed, since it last worked anywhere. */
  failedOn: Set<string>;
  /** Nodes it worked on in this network. */
  workedOn: Set<string>;
}

/**
 * Which protocol to try a node with first. The configured order, unless this network showed that
 * one protocol does not get through while another does: OpenVPN failing on `threshold` different
 * nodes while SSTP worked (a filter that breaks OpenVPN handshakes) puts SSTP first, and says so.
 * What a network taught is remembered for it and comes back when the machine is on it again; a
 * change of network starts from the configured order. Per node, a protocol that failed on it last
 * while another worked there goes after that one.
 */
export class ProtocolChoice {
  #opts: Required<ProtocolChoiceOptions>;
  #network = 'default';
  #preferred: TunnelProtocol | null = null;
  #blocked: TunnelProtocol | null = null;
  #reason = '';
  #evidence = new Map<TunnelProtocol, Evidence>();
  readonly #nodes = new Map<string, Map<TunnelProtocol, NodeProtocolRecord>>();
  readonly #listeners: Listeners<ProtocolLearned>;
  readonly #log: Logger;

  constructor(
    opts: ProtocolChoiceOptions,
    private readonly memory: ProtocolMemory | null,
    logger: Logger,
  ) {
    this.#opts = { threshold: 3, nodeOrders: {}, ...opts };
    this.#log = logger.child({ component: 'protocols' });
    this.#listeners = new Listeners(this.#log, 'protocol preference');
  }

  /** The protocol this network was found to need first (null: the configured order). */
  get preferred(): TunnelProtocol | null {
    return this.#preferred;
  }

  get reason(): string {
    return this.#reason;
  }

  /**
   * The protocol this network was found not to let through (while `preferred` did), or null. The
   * probes send none of its packets on this network (a filter that sees them may flag the host).
   */
  get blocked(): TunnelProtocol | null {
    return this.#blocked;
  }

  get order(): readonly TunnelProtocol[] {
    return this.#opts.order;
  }

  get learning(): boolean {
    return this.#opts.learn;
  }

  onLearned(fn: (e: ProtocolLearned) => void): () => void {
    return this.#listeners.add(fn);
  }

  /** The user's own order for `nodeId`, or null where the configured order applies. */
  nodeOrder(nodeId: string): readonly TunnelProtocol[] | null {
    return Object.hasOwn(this.#opts.nodeOrders, nodeId) ? this.#opts.nodeOrders[nodeId]! : null;
  }

  updateOptions(opts: ProtocolChoiceOptions): void {
    this.#opts = { threshold: 3, nodeOrders: {}, ...opts };
    if (!opts.learn && this.#preferred) this.#set(null, 'learning turned off');
  }

  /** The machine is on another network (or back on one it knew): its own memory applies. */
  setNetwork(key: string): void {
    if (key === this.#network) return;
    this.#network = key;
    this.#evidence = new Map();
    const remembered = this.#opts.learn ? this.memory?.load(key) : null;
    this.#set(
      remembered?.preferred ?? null,
      remembered ? `remembered for this network: ${remembered.reason}` : 'new network: the configured order',
      false,
      remembered?.preferred ? (remembered.blocked ?? null) : null,
    );
  }

  /**
   * The order to try `node` with, among the protocols it offers: the user's own order for it, else
   * the configured order with what this network needs first put first.
   */
  orderFor(nodeId: string, offered: readonly TunnelProtocol[]): TunnelProtocol[] {
    const own = this.nodeOrder(nodeId);
    const base = (own ?? this.#opts.order).filter((p) => offered.includes(p));
    const first =
      !own && this.#preferred && base.includes(this.#preferred)
        ? [this.#preferred, ...base.filter((p) => p !== this.#preferred)]
        : base;
    const rec = this.#nodes.get(nodeId);
    if (!rec) return first;
    // This node's own last word: what worked on it goes before what just failed on it.
    const failedHere = (p: TunnelProtocol): boolean =>
      rec.get(p)?.lastOk === false && first.some((q) => q !== p && rec.get(q)?.lastOk === true);
    return [...first.filter((p) => !failedHere(p)), ...first.filter(failedHere)];
  }

  record(nodeId: string, protocol: TunnelProtocol, ok: boolean, error?: string): void {
    const perNode = this.#nodes.get(nodeId) ?? new Map<TunnelProtocol, NodeProtocolRecord>();
    this.#nodes.set(nodeId, perNode);
    const r = perNode.get(protocol) ?? { tried: 0, worked: 0, lastOk: null, lastError: null, at: 0 };
    perNode.set(protocol, {
      tried: r.tried + 1,
      worked: r.worked + (ok ? 1 : 0),
      lastOk: ok,
      lastError: ok ? null : (error ?? 'failed'),
      at: Date.now(),
    });
    const ev = this.#evidenceOf(protocol);
    if (ok) {
      ev.workedOn.add(nodeId);
      ev.failedOn.clear(); // it gets through here after all: earlier failures were the nodes'
    } else ev.failedOn.add(nodeId);
    if (this.#opts.learn) this.#learn();
  }

  /** Per node, what each protocol did (for /nodes). */
  nodeRecord(nodeId: string): Partial<Record<TunnelProtocol, NodeProtocolRecord>> {
    return Object.fromEntries(this.#nodes.get(nodeId) ?? []);
  }

  #learn(): void {
    const protocols = this.#opts.order;
    for (const blocked of protocols) {
      // failedOn holds only failures since the protocol last worked anywhere: a filter that starts later still counts.
      const failed = this.#evidenceOf(blocked).failedOn.size;
      if (failed < this.#opts.threshold) continue;
      const working = protocols.find((p) => p !== blocked && this.#evidenceOf(p).workedOn.size > 0);
      if (!working) continue;
      // The configured first protocol working again is the configured order, not a preference.
      const target = working === protocols[0] ? null : working;
      if (this.#preferred === target) continue;
      return this.#set(
        target,
        target
          ? `${label(blocked)} failed on ${failed} different nodes while ${label(working)} worked: this network seems to block ${label(blocked)}`
          : `${label(blocked)} failed on ${failed} nodes while ${label(working)} works again`,
        true,
        target ? blocked : null,
      );
    }
  }

  #evidenceOf(p: TunnelProtocol): Evidence {
    let e = this.#evidence.get(p);
    if (!e) this.#evidence.set(p, (e = { failedOn: new Set(), workedOn: new Set() }));
    return e;
  }

  #set(preferred: TunnelProtocol | null, reason: string, persist = true, blocked: TunnelProtocol | null = null): void {
    const changed = preferred !== this.#preferred;
    this.#preferred = preferred;
    this.#blocked = preferred ? blocked : null;
    this.#reason = reason;
    if (persist) this.memory?.save(this.#network, { preferred, blocked: this.#blocked, reason });
    if (!changed) return;
    this.#log.info(
      { event: 'protocol-preference', preferred, reason, network: this.#network },
      preferred
        ? `trying ${label(preferred)} first from now on: ${reason}`
        : `back to the configured protocol order: ${reason}`,
    );
    this.#listeners.emit({ preferred, blocked: this.#blocked, reason });
  }
}

const label = (p: TunnelProtocol): string => (p === 'sstp' ? 'SSTP' : p === 'sevpn' ? 'SE-VPN' : 'OpenVPN');
