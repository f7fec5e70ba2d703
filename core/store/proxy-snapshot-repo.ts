import { ErrorCodes, type Logger } from '../common/index.js';
import type { DbAccess } from './sql.js';

/** The user's own system proxy settings, kept while Gatehop's are in place so they can be restored. */
export class ProxySnapshotRepo {
  constructor(
    private readonly db: DbAccess,
    private readonly log: Logger,
  ) {}

  saveProxySnapshot(data: unknown): void {
    this.db.write('save system proxy snapshot', (q) =>
      q.run(
        'INSERT OR REPLACE INTO system_proxy_snapshot (id, saved_at, data_json) VALUES (1, ?, ?)',
        Date.now(),
        JSON.stringify(data),
      ),
    );
  }

  clearProxySnapshot(): void {
    this.db.write('clear system proxy snapshot', (q) => q.run('DELETE FROM system_proxy_snapshot WHERE id = 1'));
  }

  loadProxySnapshot<T>(): T | null {
    const r = this.db.read(
      'read the system proxy snapshot',
      (q) => q.get<{ data_json: string }>('SELECT data_json FROM system_proxy_snapshot WHERE id = 1'),
      undefined,
    );
    if (!r) return null;
    try {
      return JSON.parse(r.data_json) as T;
    } catch (err) {
      this.log.error(
        {
          event: 'store-query-failed',
          errCode: ErrorCodes.STORE_FAILED,
          what: 'parse the system proxy snapshot',
          err: (err as Error).message,
        },
        `store: parse the system proxy snapshot failed: ${(err as Error).message}`,
      );
      return null;
    }
  }
}
