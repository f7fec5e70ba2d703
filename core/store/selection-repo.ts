import type { DbAccess } from './sql.js';
import type { Selection } from './types.js';

/** Each group's pick: the pinned node, or auto. */
export class SelectionRepo {
  constructor(private readonly db: DbAccess) {}

  selection(group: string): Selection | null {
    type Row = { grp: string; node_id: string | null; mode: 'auto' | 'manual' };
    const r = this.db.read(
      'read the selection',
      (q) => q.get<Row>('SELECT grp, node_id, mode FROM selection WHERE grp = ?', group),
      undefined,
    );
    return r ? { group: r.grp, nodeId: r.node_id, mode: r.mode } : null;
  }

  setSelection(s: Selection): void {
    this.db.write('save selection', (q) =>
      q.run('INSERT OR REPLACE INTO selection (grp, node_id, mode) VALUES (?, ?, ?)', s.group, s.nodeId, s.mode),
    );
  }
}
