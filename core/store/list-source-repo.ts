import type { DbAccess } from './sql.js';
import type { StoredListSource } from './types.js';

interface SourceRow {
  url: string;
  kind: StoredListSource['kind'];
  found_at: number;
  found_from: string | null;
  last_ok_at: number | null;
  last_fail_at: number | null;
  last_error: string | null;
  last_via: StoredListSource['lastVia'];
  last_nodes: number | null;
}

/** Where node lists come from, and how each source's last attempt went. */
export class ListSourceRepo {
  constructor(private readonly db: DbAccess) {}

  listSources(): StoredListSource[] {
    return this.db.read(
      'read list sources',
      (q) => q.all<SourceRow>('SELECT * FROM list_sources ORDER BY found_at, url').map(rowToSource),
      [],
    );
  }

  saveListSource(r: StoredListSource): void {
    this.db.write('save list source', (q) =>
      q.run(
        'INSERT OR REPLACE INTO list_sources (url, kind, found_at, found_from, last_ok_at, last_fail_at, last_error, last_via, last_nodes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
        r.url,
        r.kind,
        r.foundAt,
        r.foundFrom,
        r.lastOkAt,
        r.lastFailAt,
        r.lastError?.slice(0, 500) ?? null,
        r.lastVia,
        r.lastNodes,
      ),
    );
  }

  forgetListSource(url: string): void {
    this.db.write('forget list source', (q) => q.run('DELETE FROM list_sources WHERE url = ?', url));
  }
}

function rowToSource(r: SourceRow): StoredListSource {
  return {
    url: r.url,
    kind: r.kind,
    foundAt: r.found_at,
    foundFrom: r.found_from,
    lastOkAt: r.last_ok_at,
    lastFailAt: r.last_fail_at,
    lastError: r.last_error,
    lastVia: r.last_via,
    lastNodes: r.last_nodes,
  };
}
