import type { DbAccess } from './sql.js';

/**
 * How long a node's refusal of modern TLS is remembered: its next tunnels start on legacy TLS and
 * its row says so. Past this, modern TLS is tried first again (a volunteer may have upgraded).
 */
export const WEAK_TLS_REMEMBER_MS = 30 * 24 * 3600_000;

/** The prefix of a `weak-tls <node>` key; its value is when the node last refused modern TLS. */
export const WEAK_TLS_KEY = 'weak-tls ';

/** A small key-value store (what the core remembers that is not a table of its own). */
export class SettingsRepo {
  constructor(private readonly db: DbAccess) {}

  setting(key: string): string | null {
    const r = this.db.read(
      'read a setting',
      (q) => q.get<{ value: string }>('SELECT value FROM settings WHERE key = ?', key),
      undefined,
    );
    return r?.value ?? null;
  }

  setSetting(key: string, value: string): void {
    this.db.write('save setting', (q) =>
      q.run('INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)', key, value),
    );
  }

  /** Nodes that refused modern TLS at or after `sinceMs`. */
  weakTlsNodes(sinceMs: number): Set<string> {
    const rows = this.db.read(
      'read weak-TLS nodes',
      (q) => q.all<{ key: string; value: string }>("SELECT key, value FROM settings WHERE key LIKE 'weak-tls %'"),
      [],
    );
    return new Set(rows.filter((r) => Number(r.value) >= sinceMs).map((r) => r.key.slice(WEAK_TLS_KEY.length)));
  }

  rememberWeakTls(nodeId: string, at: number): void {
    this.setSetting(WEAK_TLS_KEY + nodeId, String(at));
  }
}
