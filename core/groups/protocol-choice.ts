import { Listeners, type Logger } from '../common/index.js';
import type { TunnelProtocol } from '../egress/index.js';

/** What this node did with each protocol: tried, worked, the last outcome. */
export interface NodeProtocolRecord {
  tried: number;
  worked: number;
  lastOk: boolean | null;
  lastError: string | null;
  at: number;
  /** The last failure was the network's (silence, a reset, a refused port), not the node's answer. */
  network?: boolean;
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
  /** When it was learnt (absent in older saves: it counts as learnt at the first load). */
  at?: number;
  /** How nodes were reached when it was learnt: directly, or through the user's other proxy. */
  path?: 'direct' | 'upstream';
}

/**
 * How long a network's lesson holds (#44). While it holds, no packet of the blocked protocol is
 * sent on that network (not even a probe): each one costs the user a connect timeout (20 s) and
 * shows the filter the protocol again. A week, because national filters change over months, not
 * days, while a lesson learnt from one node whose OpenVPN was merely off must not keep the faster
 * protocol away for longer than that; a network that changes (another interface or /24) starts
 * afresh at once, and Settings can forget a lesson any time.
 */
export const LESSON_TTL_MS = 7 * 24 * 3_600_000;

/** Why an attempt failed, as far as learning goes: `network` for silence, a reset or a refused port. */
export interface ProtocolFailure {
  message: string;
  network: boolean;
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
  #learntAt: number | null = null;
  #path: 'direct' | 'upstream' = 'direct';
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

  /** What this network taught, as /status and Settings show it (null: nothing, the configured order). */
  get lesson(): {
    network: string;
    preferred: TunnelProtocol;
    blocked: TunnelProtocol | null;
    reason: string;
    at: number;
    expiresAt: number;
    path: 'direct' | 'upstream';
  } | null {
    if (!this.#preferred || this.#learntAt === null) return null;
    return {
      network: this.#network,
      preferred: this.#preferred,
      blocked: this.#blocked,
      reason: this.#reason,
      at: this.#learntAt,
      expiresAt: this.#learntAt + LESSON_TTL_MS,
      path: this.#path,
    };
  }

  /** How nodes are reached now (the path ladder): kept with what is learnt. */
  setPath(path: 'direct' | 'upstream'): void {
    this.#path = path;
  }

  /** The user forgets what this network taught (Settings): the configured order again, every protocol tried. */
  forget(): void {
    this.#evidence = new Map();
    this.#set(null, 'forgotten by the user');
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
    const loaded = this.#opts.learn ? this.memory?.load(key) : null;
    const at = loaded ? (loaded.at ?? Date.now()) : null;
    const expired = loaded?.preferred && at !== null && Date.now() - at > LESSON_TTL_MS;
    const remembered = expired ? null : loaded;
    this.#set(
      remembered?.preferred ?? null,
      expired
        ? `what this network taught is over ${LESSON_TTL_MS / 86_400_000} days old: every protocol is tried again`
        : remembered
          ? `remembered for this network: ${remembered.reason}`
          : 'new network: the configured order',
      !!expired,
      remembered?.preferred ? (remembered.blocked ?? null) : null,
      remembered?.preferred ? at : null,
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

  /**
   * The protocols a packet may go to `nodeId` with on this network now, in the order to try them:
   * orderFor's, less the protocol this network blocks while its lesson holds (#44, #58). Every
   * sender of packets to nodes asks this: the probes, and every tunnel (switches, warm standbys,
   * balance members, delay tests and honesty checks all open theirs through NodeConnector). The
   * user's own order for a node is kept whole: they asked for it there.
   */
  attemptOrder(nodeId: string, offered: readonly TunnelProtocol[]): TunnelProtocol[] {
    const order = this.orderFor(nodeId, offered);
    const blocked = this.#blocked;
    return blocked && !this.nodeOrder(nodeId) ? order.filter((p) => p !== blocked) : order;
  }

  /**
   * An attempt's outcome. A failure for a network reason (silence, a reset, a refused port) on a
   * node where another protocol then worked is learnt at once (#44): that node was up, only this
   * protocol did not get through. Other failures count towards `threshold` distinct nodes.
   */
  record(nodeId: string, protocol: TunnelProtocol, ok: boolean, failure?: string | ProtocolFailure): void {
    const error = typeof failure === 'string' ? failure : failure?.message;
    const network = typeof failure === 'object' && failure.network;
    const perNode = this.#nodes.get(nodeId) ?? new Map<TunnelProtocol, NodeProtocolRecord>();
    this.#nodes.set(nodeId, perNode);
    const r = perNode.get(protocol) ?? { tried: 0, worked: 0, lastOk: null, lastError: null, at: 0 };
    perNode.set(protocol, {
      tried: r.tried + 1,
      worked: r.worked + (ok ? 1 : 0),
      lastOk: ok,
      lastError: ok ? null : (error ?? 'failed'),
      at: Date.now(),
      ...(ok ? {} : { network }),
    });
    const ev = this.#evidenceOf(protocol);
    if (ok) {
      ev.workedOn.add(nodeId);
      ev.failedOn.clear(); // it gets through here after all: earlier failures were the nodes'
    } else ev.failedOn.add(nodeId);
    if (!this.#opts.learn) return;
    if (ok && this.#learnAtOnce(nodeId, protocol)) return;
    this.#learn();
  }

  /**
   * `working` just came up on `nodeId`: if another protocol failed on this very node for a network
   * reason, this network blocks that one (the node itself was there): learnt at once.
   */
  #learnAtOnce(nodeId: string, working: TunnelProtocol): boolean {
    const rec = this.#nodes.get(nodeId);
    const blocked = this.#opts.order.find(
      (p) => p !== working && rec?.get(p)?.lastOk === false && rec.get(p)?.network === true,
    );
    if (!blocked) return false;
    const target = working === this.#opts.order[0] ? null : working;
    if (this.#preferred === target && this.#blocked === blocked) return true;
    this.#set(
      target,
      target
        ? `${protocolLabel(blocked)} got no answer from ${nodeId} (${rec!.get(blocked)!.lastError}) while ${protocolLabel(working)} worked there: this network seems to block ${protocolLabel(blocked)}`
        : `${protocolLabel(working)} works again`,
      true,
      target ? blocked : null,
    );
    return true;
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
          ? `${protocolLabel(blocked)} failed on ${failed} different nodes while ${protocolLabel(working)} worked: this network seems to block ${protocolLabel(blocked)}`
          : `${protocolLabel(blocked)} failed on ${failed} nodes while ${protocolLabel(working)} works again`,
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

  #set(
    preferred: TunnelProtocol | null,
    reason: string,
    persist = true,
    blocked: TunnelProtocol | null = null,
    learntAt: number | null = preferred ? Date.now() : null,
  ): void {
    const changed = preferred !== this.#preferred;
    this.#preferred = preferred;
    this.#blocked = preferred ? blocked : null;
    this.#reason = reason;
    this.#learntAt = preferred ? learntAt : null;
    if (persist)
      this.memory?.save(this.#network, {
        preferred,
        blocked: this.#blocked,
        reason,
        ...(this.#learntAt !== null ? { at: this.#learntAt } : {}),
        path: this.#path,
      });
    if (!changed) return;
    this.#log.info(
      { event: 'protocol-preference', preferred, reason, network: this.#network },
      preferred
        ? `trying ${protocolLabel(preferred)} first from now on: ${reason}`
        : `back to the configured protocol order: ${reason}`,
    );
    this.#listeners.emit({ preferred, blocked: this.#blocked, reason });
  }
}

/** A protocol's name as the user reads it. */
export const protocolLabel = (p: TunnelProtocol): string =>
  p === 'sstp' ? 'SSTP' : p === 'sevpn' ? 'SE-VPN' : 'OpenVPN';
