import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isMap, LineCounter, parseDocument, type Document } from 'yaml';
import { errorToJson } from '../common/index.js';
import { parseProfile } from '../ovpn/index.js';
import { Store } from '../store/index.js';
import { OFFICIAL_ENDPOINTS, type VpnGateNode } from '../vpngate/index.js';
import { buildConfig, configSchema, type ConfigInput } from './config.js';
import { defaultDataDir } from './paths.js';

/** One thing wrong, and where: a file (or "command line"), the key path, the line when known. */
export interface Problem {
  where: string;
  key?: string;
  line?: number;
  message: string;
}

export function formatProblem(p: Problem): string {
  return `${p.where}${p.line ? `:${p.line}` : ''}${p.key ? ` ${p.key}` : ''}: ${p.message}`;
}

interface ParsedFile {
  input: ConfigInput;
  doc: Document | null;
  lines: LineCounter;
}

function readYaml(path: string, problems: Problem[]): ParsedFile {
  const lines = new LineCounter();
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    problems.push({
      where: path,
      message: `cannot read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    });
    return { input: {}, doc: null, lines };
  }
  const doc = parseDocument(text, { lineCounter: lines });
  for (const e of doc.errors)
    problems.push({ where: path, line: e.linePos?.[0].line, message: `not valid YAML: ${e.message.split('\n')[0]}` });
  if (doc.errors.length > 0) return { input: {}, doc: null, lines };
  const data: unknown = doc.toJS() ?? {};
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    problems.push({ where: path, line: 1, message: 'must be a mapping of settings' });
    return { input: {}, doc: null, lines };
  }
  return { input: data, doc, lines };
}

/** The line of a key path in the YAML document (the deepest node that exists). */
function lineOf(file: ParsedFile, path: ReadonlyArray<PropertyKey>): number | undefined {
  if (!file.doc) return undefined;
  for (let n = path.length; n > 0; n--) {
    const node = file.doc.getIn(path.slice(0, n).map(String), true) as { range?: [number, number, number] } | undefined;
    const parent = n > 1 ? file.doc.getIn(path.slice(0, n - 1).map(String), true) : file.doc.contents;
    // A key that is there: its own position (the pair's key), else the value's.
    if (isMap(parent)) {
      const pair = parent.items.find(
        (i) => String((i.key as { value?: unknown })?.value ?? i.key) === String(path[n - 1]),
      );
      const range = (pair?.key as { range?: [number, number, number] } | undefined)?.range;
      if (range) return file.lines.linePos(range[0]).line;
    }
    if (node?.range) return file.lines.linePos(node.range[0]).line;
  }
  return undefined;
}

/**
 * The node list sources a start would try, with how each last went (from the data dir's store):
 * what a user in a blocked network needs to see first. One line each.
 */
export function describeSources(opts: { configPath?: string; flags: ConfigInput }): string[] {
  let config;
  try {
    config = buildConfig(opts.configPath ? readYaml(opts.configPath, []).input : {}, opts.flags);
  } catch {
    return [];
  }
  if (config.egress !== 'vpngate') return [];
  const remembered = new Map(Store.readListSources(join(config.dataDir, 'gatehop.db')).map((r) => [r.url, r]));
  const kind = config.api.length > 0 ? 'api' : 'official';
  const configured: Array<[string, string]> = [
    ...(config.ovpn.length > 0 && config.api.length === 0 && config.vpngate.sources.length === 0
      ? []
      : (config.api.length > 0 ? config.api : OFFICIAL_ENDPOINTS).map((u): [string, string] => [u, kind])),
    ...config.vpngate.sources.map((u): [string, string] => [u, 'user']),
    ...(config.vpngate.mirrors
      ? [...remembered.values()].filter((r) => r.kind === 'mirror').map((r): [string, string] => [r.url, 'mirror'])
      : []),
  ];
  const via = config.upstream ? ` via upstream ${config.upstream.proxy.display}` : '';
  const lines = [`list sources${via} (${configured.length}):`];
  for (const [url, k] of configured) {
    const r = remembered.get(url);
    const state =
      !r || (r.lastOkAt === null && r.lastFailAt === null)
        ? 'not tried yet'
        : (r.lastOkAt ?? 0) >= (r.lastFailAt ?? 0)
          ? `ok ${new Date(r.lastOkAt!).toISOString()} (${r.lastVia}, ${r.lastNodes ?? '?'} nodes)`
          : `failed ${new Date(r.lastFailAt!).toISOString()} (${r.lastVia}): ${r.lastError}`;
    lines.push(`  ${k.padEnd(8)} ${url}: ${state}`);
  }
  return lines;
}

/**
 * `gatehop check`: the config file, the flags, every --ovpn profile and the cached node list,
 * each problem with where it is, without binding a port, probing or connecting. Every problem is
 * reported (not only the first), so one run shows all there is to fix.
 */
export function checkSetup(opts: { configPath?: string; flags: ConfigInput }): Problem[] {
  const problems: Problem[] = [];
  const file = opts.configPath
    ? readYaml(opts.configPath, problems)
    : { input: {}, doc: null, lines: new LineCounter() };
  const where = opts.configPath ?? 'config';
  // Each layer alone first, so a problem is named where it is written.
  for (const [layer, input, src] of [[where, file.input, file] as const, ['command line', opts.flags, null] as const]) {
    const r = configSchema.safeParse(input);
    if (r.success) continue;
    for (const issue of r.error.issues) {
      const key = issue.path.length ? issue.path.join('.') : undefined;
      problems.push({
        where: layer,
        ...(key ? { key } : {}),
        ...(src
          ? {
              line: lineOf(
                src,
                issue.path.length ? issue.path : issue.code === 'unrecognized_keys' ? [issue.keys[0]!] : [],
              ),
            }
          : {}),
        message: issue.message,
      });
    }
  }
  // Then the rules across fields and layers, as a start would apply them.
  let dataDir = defaultDataDir();
  let ovpn: readonly string[] = [];
  if (problems.length === 0) {
    try {
      const config = buildConfig(file.input, opts.flags);
      dataDir = config.dataDir;
      ovpn = config.ovpn;
    } catch (err) {
      problems.push({ where: 'config', message: errorToJson(err).message });
    }
  }
  for (const path of ovpn) {
    try {
      parseProfile(readFileSync(path, 'utf8'));
    } catch (err) {
      problems.push({ where: path, message: `not a usable OpenVPN profile: ${(err as Error).message}` });
    }
  }
  const db = join(dataDir, 'gatehop.db');
  try {
    const list = Store.readCachedList<VpnGateNode>(db);
    for (const n of list?.nodes ?? []) {
      try {
        parseProfile(n.profile);
      } catch (err) {
        problems.push({
          where: `${db} (cached list)`,
          key: n.id,
          message: `its profile is not usable: ${(err as Error).message}`,
        });
      }
    }
  } catch (err) {
    problems.push({ where: db, message: `the cached list cannot be read: ${(err as Error).message}` });
  }
  return problems;
}
