import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createLogger, errorToJson } from '../../common/index.js';
import { refusedAddress } from '../../reach/index.js';
import { importResultSchema, type ImportResult } from '../../api/index.js';
import { Store } from '../../store/index.js';
import { describeSkipped, parseVpnGateCsv } from '../../vpngate/index.js';
import { callRunningCore, refusalOf } from '../admin-call.js';
import type { GatehopConfig } from '../config.js';

function fail(message: string): never {
  process.stderr.write(`gatehop import-list: ${message}\n`);
  process.exit(1);
}

/**
 * `gatehop import-list FILE`: the nodes of a list file join the pool. A core running with this data
 * dir takes them at once through its admin API (it holds the pool in memory); with none running
 * they are written to the store, where the next start finds them.
 */
export async function importListCommand(file: string, config: GatehopConfig): Promise<void> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    fail(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  let parsed;
  try {
    parsed = parseVpnGateCsv(text, {
      addressPolicy: (ip) => refusedAddress(ip, config.vpngate.allowPrivateNodes),
    });
  } catch (err) {
    fail(`${file} is not a VPN Gate list: ${errorToJson(err).message}`);
  }
  if (parsed.nodes.length === 0) fail(`${file} has no usable node (skipped: ${describeSkipped(parsed.skipped)})`);
  const skipped = Object.keys(parsed.skipped).length ? ` (skipped: ${describeSkipped(parsed.skipped)})` : '';
  const running = await toRunningCore(text, config);
  if (running) {
    process.stdout.write(
      `gatehop: imported ${running.imported} nodes from ${file}${skipped} into the running Gatehop; its pool has ${running.nodes} nodes\n`,
    );
    return;
  }
  const store = new Store({
    path: join(config.dataDir, 'gatehop.db'),
    logger: createLogger({ level: 'warn', file: null }),
  });
  try {
    const at = Date.now();
    store.savePoolNodes(parsed.nodes, at);
    store.saveListMeta({ fetchedAt: at, source: 'import', via: 'import', nodes: parsed.nodes.length });
    const total = store.loadPool(at - config.vpngate.keepDays * 24 * 3600_000).length;
    process.stdout.write(
      `gatehop: imported ${parsed.nodes.length} nodes from ${file}${skipped} into ${config.dataDir}; the pool has ${total} nodes\n`,
    );
  } catch (err) {
    fail(`cannot save the nodes: ${errorToJson(err).message}`);
  } finally {
    store.close();
  }
}

/** POST /nodes/import to a core listening on this config's admin address, or null when none answers. */
async function toRunningCore(csv: string, config: GatehopConfig): Promise<ImportResult | null> {
  const a = await callRunningCore(config, 'POST', '/nodes/import', { type: 'text/csv', data: csv });
  if ('absent' in a) return null; // no core to ask: write the store instead
  if (!a.ok) fail(`the running Gatehop refused the list: ${refusalOf(a)}`);
  return importResultSchema.parse(a.body);
}
