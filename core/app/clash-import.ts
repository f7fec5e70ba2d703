import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { ErrorCodes, GatehopError, writeFileAtomic } from '../common/index.js';
import type { RuleImportResult, Settings, SettingsAccess, ruleImportRequestSchema } from '../api/index.js';
import { readClashConfig, retarget, RuleParseError, type ClashImport, type RouteTarget } from '../rules/index.js';

/** What earlier imports mapped each group name to, kept so an updated file asks only about new names. */
const MAPPING_FILE = 'rule-import-mapping.json';
const mappingSchema = z.object({
  version: z.literal(1),
  names: z.record(z.string(), z.enum(['TUNNEL', 'DIRECT', 'REJECT'])),
});

export function loadImportMapping(dataDir: string): Record<string, RouteTarget> {
  try {
    return mappingSchema.parse(JSON.parse(readFileSync(join(dataDir, MAPPING_FILE), 'utf8'))).names;
  } catch {
    return {}; // none yet, or unreadable: every name is asked about again, nothing worse
  }
}

function saveImportMapping(dataDir: string, names: Record<string, RouteTarget>): void {
  writeFileAtomic(join(dataDir, MAPPING_FILE), JSON.stringify({ version: 1, names }, null, 1));
}

export interface RuleImportDeps {
  readonly dataDir: string;
  /** Fetches a config by URL (directly, then through the tunnel where the core runs). */
  fetchText(url: string): Promise<string>;
  readonly settings: SettingsAccess;
}

/**
 * Reads a Clash config's routing and, with `apply`, saves it as the user's: rules and sub-rules
 * with every target mapped, its http rule sets beside the user's own (a name it shares replaces
 * the user's), and, with `setMode`, its mode: a config's `mode: global` would send the user's home
 * network through a node, so it is shown and asked, never taken unasked (#59). Only names the
 * mapping covers change; the mapping used is kept.
 */
export async function importRules(
  request: z.output<typeof ruleImportRequestSchema>,
  deps: RuleImportDeps,
): Promise<RuleImportResult> {
  const text = request.config ?? (await deps.fetchText(request.url!));
  let imp: ClashImport;
  try {
    imp = readClashConfig(text);
  } catch (err) {
    if (!(err instanceof RuleParseError)) throw err;
    throw new GatehopError(ErrorCodes.CONFIG_INVALID, `not a Clash config with rules: ${err.message}`);
  }
  const saved = loadImportMapping(deps.dataDir);
  const given = request.mapping ?? {};
  const targets = imp.targets.map((t) => ({
    ...t,
    saved: saved[t.name] ?? null,
    use: given[t.name] ?? saved[t.name] ?? t.guess,
  }));
  const result: RuleImportResult = {
    mode: imp.mode,
    rules: imp.rules.length,
    subRules: Object.keys(imp.subRules),
    ruleSets: Object.keys(imp.ruleProviders),
    targets,
    ask: targets.filter((t) => t.why !== 'builtin' && t.saved === null).map((t) => t.name),
    skipped: imp.skipped,
    applied: false,
    restartRequired: [],
  };
  if (!request.apply) return result;
  const mapping = Object.fromEntries(targets.map((t) => [t.name, t.use]));
  const patch: Partial<Settings> = {
    rules: retarget(imp.rules, mapping),
    subRules: Object.fromEntries(Object.entries(imp.subRules).map(([k, v]) => [k, retarget(v, mapping)])),
    ruleProviders: {
      ...deps.settings.get().ruleProviders,
      // mihomo's default interval is none (fetched once); a day here, as Gatehop's own default.
      ...Object.fromEntries(Object.entries(imp.ruleProviders).map(([k, p]) => [k, { interval: 86_400, ...p }])),
    },
    ...(imp.mode && request.setMode ? { mode: imp.mode } : {}),
  };
  const r = await deps.settings.update(patch);
  const keep = { ...saved };
  for (const t of targets) if (t.why !== 'builtin') keep[t.name] = t.use;
  saveImportMapping(deps.dataDir, keep);
  return { ...result, ask: [], applied: true, restartRequired: r.restartRequired };
}
