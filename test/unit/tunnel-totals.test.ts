import { describe, expect, it } from 'vitest';
import { TunnelTotals } from '../../core/api/index.js';

describe('tunnel totals for /metrics (#34 item 7: no map keyed by outside input grows without end)', () => {
  it('a week of switches: ten thousand tunnels on a thousand listed nodes keep the rows bounded and the sums whole', () => {
    const totals = new TunnelTotals();
    let expected = 0;
    for (let i = 0; i < 10_000; i++) {
      const bytes = 1000 + i;
      expected += bytes;
      // Each scrape sees one live tunnel; the one before has closed.
      totals.update([{ id: `t${i}`, nodeId: `node-${i % 1000}`, values: { bytesDown: bytes } }]);
    }
    totals.update([]);
    expect(totals.sum('bytesDown')).toBe(expected);
    expect(totals.size).toBeLessThanOrEqual(TunnelTotals.MAX_RETIRED_NODES + 1);
    const rows = totals.byNode('bytesDown');
    expect(rows.reduce((n, [, v]) => n + v, 0)).toBe(expected);
    expect(rows.some(([l]) => l.egress === 'other')).toBe(true);
  });

  it('a node used again keeps one row, and a live tunnel counts once', () => {
    const totals = new TunnelTotals();
    totals.update([{ id: 'a', nodeId: 'n1', values: { reconnects: 2 } }]);
    totals.update([{ id: 'a', nodeId: 'n1', values: { reconnects: 3 } }]);
    totals.update([{ id: 'b', nodeId: 'n1', values: { reconnects: 1 } }]);
    expect(totals.sum('reconnects')).toBe(4);
    expect(totals.byNode('reconnects')).toEqual([[{ egress: 'n1' }, 4]]);
  });
});
