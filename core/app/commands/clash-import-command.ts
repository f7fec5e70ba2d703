import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline/promises';
import { createLogger, errorToJson } from '../../common/index.js';
import { ruleImportRequestSchema, ruleImportResultSchema, type RuleImportResult } from '../../api/index.js';
import type { RouteTarget } from '../../rules/index.js';
import { callRunningCore, refusalOf } from '../admin-call.js';
import type { ConfigInput, GatehopConfig } from '../config.js';
import { importRules } from '../clash-import.js';
import { SettingsFile } from '../settings-file.js';

export interface ImportRulesOptions {
  /** NAME=TARGET pairs from --map. */
  map: string[];
  /** Take Gatehop's guess for every name not mapped (no questions). */
  yes: boolean;
  /** Only show what would be imported. */
  dryRun: boolean;
  /** Take the config's mode too (--set-mode); asked on a terminal otherwise, never taken with --yes alone. */
  setMode: boolean;
}

const TARGETS: readonly RouteTarget[] = ['TUNNEL', 'DIRECT', 'REJECT'];

function fail(message: string, code = 1): never {
  process.stderr.write(`gatehop import-rules: ${message}\n`);
  process.exit(code);
}

/**
 * `gatehop import-rules <file|url>`: a mihomo/Clash config's rules, sub-rules, rule sets and mode
 * become Gatehop's, each group name mapped to TUNNEL, DIRECT or REJECT (asked on a terminal, from
 * --map, or Gatehop's guess with --yes; an earlier import's answers are kept). A core running with
 * this data dir takes them at once; with none running they are saved for the next start.
 */
export async function importRulesCommand(
  source: string,
  opts: ImportRulesOptions,
  config: GatehopConfig,
  layers: { fromFile: ConfigInput; fromFlags: ConfigInput },
): Promise<void> {
  const given: Record<string, RouteTarget> = {};
  for (const pair of opts.map) {
    const at = pair.lastIndexOf('=');
    const target = pair
      .slice(at + 1)
      .trim()
      .toUpperCase() as RouteTarget;
    if (at <= 0 || !TARGETS.includes(target)) fail(`--map ${pair}: write NAME=TUNNEL, NAME=DIRECT or NAME=REJECT`, 2);
    given[pair.slice(0, at)] = target;
  }
  const isUrl = /^https?:\/\//i.test(source);
  let text: string | undefined;
  if (!isUrl)
    try {
      text = readFileSync(source, 'utf8');
    } catch (err) {
      fail(`cannot read ${source}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  const ask = async (
    apply: boolean,
    mapping: Record<string, RouteTarget>,
    setMode = false,
  ): Promise<RuleImportResult> => {
    const request = { ...(isUrl ? { url: source } : { config: text! }), mapping, apply, setMode };
    const running = await callRunningCore(
      config,
      'POST',
      '/routing/import',
      { type: 'application/json', data: JSON.stringify(request) },
      120_000,
    );
    if (!('absent' in running)) {
      if (!running.ok) fail(`the running Gatehop refused it: ${refusalOf(running)}`);
      return ruleImportResultSchema.parse(running.body);
    }
    // No core running: read the file here and save the settings the next start reads.
    try {
      return await importRules(ruleImportRequestSchema.parse(request), {
        dataDir: config.dataDir,
        fetchText: async (url) => {
          const res = await fetch(url, { signal: AbortSignal.timeout(60_000) });
          if (!res.ok) throw new Error(`HTTP ${res.status}`);
          return res.text();
        },
        settings: new SettingsFile(config, layers, createLogger({ level: 'warn', file: null })),
      });
    } catch (err) {
      return fail(errorToJson(err).message);
    }
  };

  const first = await ask(false, given);
  process.stdout.write(describe(first));
  const open = first.ask.filter((n) => given[n] === undefined);
  const mapping: Record<string, RouteTarget> = { ...given };
  if (open.length > 0 && !opts.yes) {
    if (!process.stdin.isTTY)
      fail(
        `${open.length} name${open.length === 1 ? '' : 's'} to map (${open.join(', ')}): run again with --map NAME=TUNNEL|DIRECT|REJECT for each, or --yes to take the guesses shown`,
        3,
      );
    const rl = createInterface({ input: process.stdin, output: process.stdout });
    try {
      for (const name of open) {
        const guess = first.targets.find((t) => t.name === name)!.use;
        for (;;) {
          const answer = (await rl.question(`  ${name} → [${guess}] TUNNEL, DIRECT or REJECT? `)).trim().toUpperCase();
          if (answer === '') mapping[name] = guess;
          else if (TARGETS.includes(answer as RouteTarget)) mapping[name] = answer as RouteTarget;
          else continue;
          break;
        }
      }
    } finally {
      rl.close();
    }
  }
  let setMode = opts.setMode && first.mode !== null;
  if (first.mode && !opts.setMode && !opts.yes && process.stdin.isTTY) {
    const rl = createInterface({ input: process.stdin, output: process.stdout });
    try {
      const answer = await rl.question(`  its mode is ${first.mode}: take it too? [y/N] `);
      setMode = /^y(es)?$/i.test(answer.trim());
    } finally {
      rl.close();
    }
  }
  if (opts.dryRun) {
    process.stdout.write('gatehop import-rules: nothing saved (--dry-run)\n');
    return;
  }
  const done = await ask(true, mapping, setMode);
  const modeSaid = done.mode
    ? setMode
      ? `, mode ${done.mode}`
      : `; its mode (${done.mode}) not taken: --set-mode takes it`
    : '';
  process.stdout.write(
    `gatehop import-rules: saved ${done.rules} rules${done.subRules.length ? `, ${done.subRules.length} sub-rule lists` : ''}${done.ruleSets.length ? `, ${done.ruleSets.length} rule sets` : ''}${modeSaid}; the mapping is kept for the next import\n`,
  );
  if (done.restartRequired.length)
    process.stdout.write(`gatehop import-rules: ${done.restartRequired.join(', ')} take effect after a restart\n`);
}

function describe(r: RuleImportResult): string {
  const lines = [
    `${r.rules} rules, ${r.subRules.length} sub-rule lists, ${r.ruleSets.length} rule sets, its mode ${r.mode ?? '(none)'}`,
  ];
  lines.push('targets:');
  for (const t of r.targets) {
    const how = t.why === 'builtin' ? '' : t.saved ? ' (as last time)' : ` (guess: ${t.why})`;
    lines.push(`  ${t.name}: ${t.rules} rules → ${t.use}${how}`);
  }
  for (const s of r.skipped) lines.push(`left out: ${s.what}: ${s.why}`);
  return lines.map((l) => `${l}\n`).join('');
}
