import type { Logger } from '../common/index.js';
import type { AddressPolicy } from '../reach/index.js';
import type { DialVia, Dialer } from '../reach/index.js';
import type { VpnGateNode } from './node.js';
import type { PoolEntry } from './pool.js';
import type { SourceStore } from './source-book.js';
import type { ListSource } from './sources.js';

/**
 * Where the current list came from: a source of that kind fetched directly (`direct` for the
 * official or --api endpoints, `mirror`, `user`), anything fetched through a working tunnel or the
 * upstream proxy (`tunnel`, `upstream`), an imported file, or the pool saved by an earlier run.
 */
export type ListVia = 'direct' | 'mirror' | 'user' | 'import' | 'tunnel' | 'upstream' | 'cache' | 'none';

export interface ListMeta {
  fetchedAt: number;
  source: string;
  via: ListVia;
  nodes: number;
}

/** What the list remembers between runs (the store, through the app). */
export interface NodeListStore extends SourceStore {
  /** The pool: nodes last listed at or after `sinceMs`. */
  loadPool(sinceMs: number): PoolEntry[];
  /** Adds or refreshes nodes listed at `at`. */
  savePool(nodes: readonly VpnGateNode[], at: number): void;
  /** Forgets nodes (and their history) no longer kept. */
  forgetNodes(ids: readonly string[]): void;
  loadListMeta(): ListMeta | null;
  saveListMeta(meta: ListMeta): void;
}

/** The user-facing choices about sources (config `vpngate:`), changeable by a reload. */
export interface SourceOptions {
  /** Sources the user added: any URL that serves the list in the same CSV format. */
  userSources: readonly string[];
  /** Read mirror directories and try the mirrors found when the others fail. */
  mirrors: boolean;
  /** With no direct source answering, fetch through a working tunnel. */
  throughTunnel: boolean;
  /** Keep every node listed within this many days. */
  keepDays: number;
  /** One source's deadline (default 15 s). */
  timeoutMs?: number;
  /** Each source's head start before the next (default 1.5 s). */
  headStartMs?: number;
}

export interface NodeListOptions {
  /** Official endpoints, or the --api ones that replace them. */
  endpoints: readonly string[];
  endpointKind?: 'official' | 'api';
  staticNodes: readonly VpnGateNode[];
  store: NodeListStore;
  logger: Logger;
  sources?: Partial<SourceOptions>;
  /** How fetches leave (default: directly; the upstream proxy when one is set). */
  dialer?: Dialer;
  /** A working tunnel's dialer, asked after every direct source failed; null while none is up. */
  tunnelDialer?: () => Dialer | null;
  refreshMs?: number;
  fetch?: {
    timeoutMs?: number;
    maxBytes?: number;
    attempts?: number;
    backoffMs?: number;
    staggerMs?: number;
    concurrency?: number;
  };
  now?: () => number;
  /**
   * Which node addresses are dialled (read per use: a reload applies to the next list and to the
   * pool at once). Also where a mirror's URL may point. Default: public addresses only.
   */
  addressPolicy?: AddressPolicy;
  /** Nodes whose row now names another CA (MergeResult.rekeyed): what was learnt of the old one is forgotten. */
  onRekeyed?: (ids: readonly string[]) => void;
}

export interface SourceState {
  url: string;
  kind: ListSource['kind'];
  via: DialVia | null;
  /** null: not tried yet. */
  ok: boolean | null;
  error: string | null;
  at: number | null;
}

export interface ListStatus {
  source: string | null;
  via: ListVia;
  fetchedAt: number | null;
  nodes: number;
  refreshing: boolean;
  /** Every source Gatehop knows, with how its last attempt went. */
  sources: SourceState[];
  /** Rows the current list (fetched or imported) had that are not used, by reason. */
  skipped: Record<string, number>;
}
