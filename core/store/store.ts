import type { Logger } from '../common/index.js';
import { Db } from './db.js';
import { HistoryRepo } from './history-repo.js';
import { HonestyRepo } from './honesty-repo.js';
import { LatencyRepo } from './latency-repo.js';
import { ListSourceRepo } from './list-source-repo.js';
import { NodeListRepo } from './node-list-repo.js';
import { ProxySnapshotRepo } from './proxy-snapshot-repo.js';
import { readCachedList, readListSources } from './read-only.js';
import { SelectionRepo } from './selection-repo.js';
import { SettingsRepo, WEAK_TLS_KEY } from './settings-repo.js';
import { ShareDeviceRepo } from './share-device-repo.js';
import { TrafficRepo } from './traffic-repo.js';
import type {
  LatencySample,
  NodeHistory,
  Selection,
  StoredHonesty,
  StoredListMeta,
  StoredListSource,
  StoredNodeList,
  StoredPoolEntry,
  StoredShareDevice,
  StoreHealth,
  StoreIncident,
} from './types.js';

export interface StoreOptions {
  /** File path, or ':memory:'. */
  path: string;
  logger: Logger;
  /** Latency samples older than this are deleted (default 24 h). */
  latencyWindowMs?: number;
  /** Batched writes are flushed after this long (default 1 s) or at 200 queued. */
  flushMs?: number;
}

/** Every table holding something learnt about a node, by the column naming the node. */
const PER_NODE_TABLES = [
  'nodes WHERE id',
  'node_history WHERE node_id',
  'latency_samples WHERE node_id',
  'node_honesty WHERE node_id',
] as const;

/**
 * What Gatehop remembers, in SQLite (WAL): one database (`Db`: its life, recovery and the guard
 * every query takes) and one repository per kind of data. This class only puts them together:
 * each method is the repository's, except forgetting a node, which spans them. Nothing here ever
 * stops the app (see Db); a file written by a newer Gatehop is refused (GH_ERR_STORE_TOO_NEW).
 */
export class Store {
  readonly #db: Db;
  readonly #nodeList: NodeListRepo;
  readonly #sources: ListSourceRepo;
  readonly #history: HistoryRepo;
  readonly #latency: LatencyRepo;
  readonly #selection: SelectionRepo;
  readonly #settings: SettingsRepo;
  readonly #honesty: HonestyRepo;
  readonly #proxySnapshot: ProxySnapshotRepo;
  readonly #shareDevices: ShareDeviceRepo;
  /** The traffic ledger's rows and kept closed connections (#64): core/traffic's own repository. */
  readonly traffic: TrafficRepo;

  constructor(opts: StoreOptions) {
    const log = opts.logger.child({ component: 'store' });
    this.#db = new Db(opts.path, log);
    this.#nodeList = new NodeListRepo(this.#db, log);
    this.#sources = new ListSourceRepo(this.#db);
    this.#history = new HistoryRepo(this.#db);
    this.#latency = new LatencyRepo(this.#db, opts.latencyWindowMs ?? 24 * 3600_000, opts.flushMs ?? 1000);
    this.#selection = new SelectionRepo(this.#db);
    this.#settings = new SettingsRepo(this.#db);
    this.#honesty = new HonestyRepo(this.#db);
    this.#proxySnapshot = new ProxySnapshotRepo(this.#db, log);
    this.#shareDevices = new ShareDeviceRepo(this.#db);
    this.traffic = new TrafficRepo(this.#db);
  }

  /** The cached node list of a database file, read-only (`gatehop check`); see read-only.ts. */
  static readCachedList<T>(path: string): StoredNodeList<T> | null {
    return readCachedList<T>(path);
  }

  /** The list sources a database file remembers, read-only (`gatehop check`). */
  static readListSources(path: string): StoredListSource[] {
    return readListSources(path);
  }

  /** 'recovered' after a corrupt file was replaced; 'memory-only' when nothing persists any more. */
  get health(): StoreHealth {
    return this.#db.health;
  }

  /** The last thing that happened to the file (moved aside, memory only), or null. */
  get incident(): StoreIncident | null {
    return this.#db.incident;
  }

  get schemaVersion(): number {
    return this.#db.read('read the schema version', (q) => q.userVersion(), 0);
  }

  // ---- node list: the pool, the latest list's metadata, the sources ----

  saveNodeList<T extends { id: string }>(list: StoredNodeList<T>): void {
    this.#nodeList.saveNodeList(list);
  }
  loadNodeList<T>(): StoredNodeList<T> | null {
    return this.#nodeList.loadNodeList<T>();
  }
  saveListMeta(meta: StoredListMeta): void {
    this.#nodeList.saveListMeta(meta);
  }
  loadListMeta(): StoredListMeta | null {
    return this.#nodeList.loadListMeta();
  }
  savePoolNodes<T extends { id: string }>(nodes: readonly T[], at: number): void {
    this.#nodeList.savePoolNodes(nodes, at);
  }
  loadPool<T>(sinceMs: number): Array<StoredPoolEntry<T>> {
    return this.#nodeList.loadPool<T>(sinceMs);
  }
  firstSeen(nodeId: string): { firstSeen: number; lastSeen: number } | null {
    return this.#nodeList.firstSeen(nodeId);
  }

  /** Forgets nodes and what was learnt about them (pool rows, history, latency, honesty, weak TLS), in one transaction. */
  forgetNodes(ids: readonly string[]): void {
    if (ids.length === 0) return;
    this.#db.write('forget nodes', (q) =>
      q.transaction(() => {
        for (const table of PER_NODE_TABLES) for (const id of ids) q.run(`DELETE FROM ${table} = ?`, id);
        for (const id of ids) q.run('DELETE FROM settings WHERE key = ?', WEAK_TLS_KEY + id);
      }),
    );
  }

  listSources(): StoredListSource[] {
    return this.#sources.listSources();
  }
  saveListSource(r: StoredListSource): void {
    this.#sources.saveListSource(r);
  }
  forgetListSource(url: string): void {
    this.#sources.forgetListSource(url);
  }

  // ---- history and latency ----

  history(nodeId: string): NodeHistory {
    return this.#history.history(nodeId);
  }
  allHistory(): Map<string, NodeHistory> {
    return this.#history.allHistory();
  }
  saveHistory(h: NodeHistory): void {
    this.#history.saveHistory(h);
  }
  addLatency(sample: LatencySample): void {
    this.#latency.addLatency(sample);
  }
  latency(nodeId: string | null, sinceMs: number): LatencySample[] {
    return this.#latency.latency(nodeId, sinceMs);
  }
  flush(): void {
    this.#latency.flush();
  }

  // ---- selection, settings, honesty, system proxy ----

  selection(group: string): Selection | null {
    return this.#selection.selection(group);
  }
  setSelection(s: Selection): void {
    this.#selection.setSelection(s);
  }
  setting(key: string): string | null {
    return this.#settings.setting(key);
  }
  setSetting(key: string, value: string): void {
    this.#settings.setSetting(key, value);
  }
  weakTlsNodes(sinceMs: number): Set<string> {
    return this.#settings.weakTlsNodes(sinceMs);
  }
  rememberWeakTls(nodeId: string, at: number): void {
    this.#settings.rememberWeakTls(nodeId, at);
  }
  honestyRecords(): StoredHonesty[] {
    return this.#honesty.honestyRecords();
  }
  forgetHonesty(nodeIds: readonly string[]): void {
    this.#honesty.forgetHonesty(nodeIds);
  }
  saveHonesty(h: StoredHonesty): void {
    this.#honesty.saveHonesty(h);
  }
  saveProxySnapshot(data: unknown): void {
    this.#proxySnapshot.saveProxySnapshot(data);
  }
  clearProxySnapshot(): void {
    this.#proxySnapshot.clearProxySnapshot();
  }
  loadProxySnapshot<T>(): T | null {
    return this.#proxySnapshot.loadProxySnapshot<T>();
  }
  shareDevices(): StoredShareDevice[] {
    return this.#shareDevices.shareDevices();
  }
  saveShareDevice(d: StoredShareDevice): void {
    this.#shareDevices.saveShareDevice(d);
  }
  removeShareDevice(id: string): void {
    this.#shareDevices.removeShareDevice(id);
  }

  /** Writes what is queued, then closes the file; every later query is skipped. */
  close(): void {
    try {
      this.#latency.flush();
    } finally {
      this.#db.close();
    }
  }
}
