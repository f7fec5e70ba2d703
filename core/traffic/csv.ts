import type { TrafficNetwork, TrafficRow } from '../store/index.js';

/** The export's columns, in order (the first line of the file). */
export const CSV_COLUMNS = [
  'day',
  'network',
  'network_label',
  'node',
  'route',
  'rule',
  'program',
  'device',
  'bytes_up',
  'bytes_down',
  'connections',
] as const;

/** RFC 4180 quoting; a leading = + - @ is prefixed with ' so a spreadsheet never runs a node's name as a formula. */
function field(v: string | number): string {
  let s = String(v);
  if (typeof v === 'string' && /^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** The ledger's rows as CSV (CRLF lines, a header), oldest day first. */
export function trafficCsv(rows: readonly TrafficRow[], networks: ReadonlyMap<string, TrafficNetwork>): string {
  const lines = [CSV_COLUMNS.join(',')];
  for (const r of rows)
    lines.push(
      [
        r.day,
        r.network,
        networks.get(r.network)?.label ?? '',
        r.node,
        r.route,
        r.rule,
        r.program,
        r.device,
        r.bytesUp,
        r.bytesDown,
        r.flows,
      ]
        .map(field)
        .join(','),
    );
  return lines.join('\r\n') + '\r\n';
}
