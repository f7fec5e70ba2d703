import { callRunningCore } from '../admin-call.js';
import type { TrafficSummaryView } from '../../api/index.js';
import { fail, subcommandConfig } from './cli-support.js';

/**
 * `gatehop traffic`: where the bytes went (#64), asked of a running core, for a box without a
 * window: totals and each breakdown over the last days, or (--csv) the ledger's rows for a
 * spreadsheet.
 */
export async function trafficCommand(opts: {
  days?: string;
  nodesOnly?: boolean;
  csv?: boolean;
  dataDir?: string;
  config?: string;
}): Promise<void> {
  const config = subcommandConfig(opts);
  const days = Number(opts.days ?? '30');
  if (!Number.isInteger(days) || days < 1 || days > 3650) fail('--days is a whole number of days, 1 to 3650', 2);
  const path = opts.csv
    ? `/traffic/export?days=${days}`
    : `/traffic/summary?days=${days}&nodesOnly=${opts.nodesOnly ? 'true' : 'false'}`;
  const answer = await callRunningCore(config, 'GET', path, null);
  if ('absent' in answer) return fail(`cannot reach Gatehop: ${answer.absent}`, 1);
  if (!answer.ok) {
    const e = (answer.body as { error?: { message?: string } } | null)?.error;
    return fail(e?.message ?? `Gatehop answered ${answer.status}`, 1);
  }
  if (opts.csv) return void process.stdout.write((answer.body as { csv: string }).csv);
  process.stdout.write(`${describeTraffic(answer.body as TrafficSummaryView)}\n`);
}

const mib = (n: number): string => `${(n / 1024 / 1024).toFixed(1)} MiB`;

/** The summary as lines a terminal shows. */
export function describeTraffic(s: TrafficSummaryView): string {
  const lines = [
    `${s.from} to ${s.to}${s.nodesOnly ? ', through nodes only' : ''}: ${mib(s.total.down)} down, ${mib(s.total.up)} up, ${s.total.flows} connections`,
  ];
  const names: Array<[string, TrafficSummaryView['byNode'], string]> = [
    ['by node', s.byNode, 'not through a node'],
    ['by network', s.byNetwork, 'unknown'],
    ['by route', s.byRoute, 'not routed'],
    ['by rule', s.byRule, 'no rule'],
    ['by program', s.byProgram, 'not looked up'],
    ['by device', s.byDevice, 'this computer'],
  ];
  for (const [title, parts, none] of names) {
    if (parts.length === 0) continue;
    lines.push(title);
    for (const p of parts)
      lines.push(`  ${(p.label || none).padEnd(40)} ${mib(p.down + p.up).padStart(12)}  ${p.flows}`);
  }
  lines.push(
    s.persistent
      ? `kept on this computer for ${s.options.retentionDays} days, never sent anywhere (the window's Traffic view changes it)`
      : 'counted in memory only (this Gatehop has no database)',
  );
  return lines.join('\n');
}
