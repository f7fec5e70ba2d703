// docs/config.md's table of every config key and its default, made from the schema itself
// (core/app/config.ts), so it cannot drift: `node --import tsx scripts/config-reference.ts --write`
// rewrites the table between its markers; test/integration/docs.test.ts fails when it is stale.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { z } from 'zod';
import { configSchema } from '../core/app/config.js';
import { proxyOptionsSchema } from '../core/proxy/index.js';

export const CONFIG_DOC = join(import.meta.dirname, '..', 'docs', 'config.md');
const START = '<!-- config-keys:start (made by scripts/config-reference.ts) -->';
const END = '<!-- config-keys:end -->';

interface Def {
  type: string;
  innerType?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  options?: z.ZodType[];
  entries?: Record<string, string>;
  values?: unknown[];
}
const defOf = (s: z.ZodType): Def => (s as unknown as { _zod: { def: Def } })._zod.def;

/** A short type: string, number, boolean, a | b, list of …, map. */
function typeOf(s: z.ZodType): string {
  const d = defOf(s);
  switch (d.type) {
    case 'default':
    case 'prefault':
    case 'optional':
    case 'nullable':
      return typeOf(d.innerType!);
    case 'enum':
      return Object.values(d.entries ?? {}).join(' \\| ');
    case 'literal':
      return (d.values ?? []).map(String).join(' \\| ');
    case 'union':
      return (d.options ?? []).map(typeOf).join(' \\| ');
    case 'array':
      return `list of ${typeOf(d.element!)}`;
    case 'record':
      return 'map';
    case 'object':
      return 'object';
    case 'pipe':
      return 'string';
    default:
      return d.type;
  }
}

function leaves(s: z.ZodType, path: string, out: Array<[string, string]>): void {
  const d = defOf(s);
  if (['default', 'prefault', 'optional', 'nullable'].includes(d.type)) return leaves(d.innerType!, path, out);
  if (d.type === 'object' && path !== '' && Object.keys(d.shape!).length === 0) return void out.push([path, 'object']);
  if (d.type === 'object') {
    for (const [k, v] of Object.entries(d.shape!)) leaves(v, path ? `${path}.${k}` : k, out);
    return;
  }
  out.push([path, typeOf(s)]);
}

function valueAt(obj: unknown, path: string): unknown {
  return path
    .split('.')
    .reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), obj);
}

/** Defaults filled in later than the config schema (by the part that uses the key). */
const LATER: Record<string, string> = {
  dataDir: 'the OS app-data folder',
  logFile: 'files in `<data dir>/logs/`',
  rules: 'the default table (LAN direct, the rest through the tunnel)',
  'upstream.nodes': '`true` (once `upstream.url` is set)',
};

function show(path: string, v: unknown): string {
  if (LATER[path]) return LATER[path];
  if (v === undefined && path.startsWith('proxy.'))
    v = valueAt(proxyOptionsSchema.parse({ host: '127.0.0.1', port: 1080 }), path.slice('proxy.'.length));
  if (v === undefined) return '(unset)';
  const text = JSON.stringify(v);
  return `\`${text.length > 90 ? `${text.slice(0, 87)}…` : text}\``.replace(/\|/g, '\\|');
}

export function configKeyTable(): string {
  const defaults = configSchema.parse({});
  const rows: Array<[string, string]> = [];
  leaves(configSchema, '', rows);
  const lines = ['| key | type | default |', '|---|---|---|'];
  for (const [path, type] of rows) lines.push(`| \`${path}\` | ${type} | ${show(path, valueAt(defaults, path))} |`);
  return lines.join('\n');
}

export function withTable(doc: string): string {
  const a = doc.indexOf(START);
  const b = doc.indexOf(END);
  if (a < 0 || b < a) throw new Error(`docs/config.md has no ${START} … ${END} markers`);
  return `${doc.slice(0, a + START.length)}\n${configKeyTable()}\n${doc.slice(b)}`;
}

if (process.argv.includes('--write')) {
  writeFileSync(CONFIG_DOC, withTable(readFileSync(CONFIG_DOC, 'utf8')));
  process.stdout.write(`config-reference: wrote ${CONFIG_DOC}\n`);
}
