/**
 * The docs tell the truth (#62): every `gatehop …` line they show names a real subcommand and real
 * flags, every config they show passes `gatehop check`, every relative link lands on a file and a
 * heading that exist, and docs/config.md's key table is the schema's. Needs the build (bin/gatehop.js).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../core/app/config.js';
import { CONFIG_DOC, withTable } from '../../scripts/config-reference.js';

const ROOT = resolve(import.meta.dirname, '../..');
const BIN = join(ROOT, 'bin/gatehop.js');

const DOCS = [
  'README.md',
  'README.zh-CN.md',
  'README.fa.md',
  'CONTRIBUTING.md',
  'SECURITY.md',
  'core/api/README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const text = (file: string): string => readFileSync(join(ROOT, file), 'utf8');

interface Block {
  file: string;
  lang: string;
  body: string;
}
function blocks(file: string): Block[] {
  const out: Block[] = [];
  // A block inside a list item is indented as its fence is: that much is taken off each line.
  const re = /^( *)```([a-z]*)\n([\s\S]*?)^ *```/gm;
  for (const m of text(file).matchAll(re))
    out.push({ file, lang: m[2]!, body: m[3]!.replace(new RegExp(`^ {0,${m[1]!.length}}`, 'gm'), '') });
  return out;
}
const ALL_BLOCKS = DOCS.flatMap(blocks);

function run(args: string[], dataDir?: string): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, [BIN, ...args, ...(dataDir ? ['--data-dir', dataDir] : [])], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

const SUBCOMMANDS = new Set([
  'passwd',
  'check',
  'run',
  'terminal',
  'tun',
  'import-list',
  'import-rules',
  'sysproxy',
  'service',
  'share',
  'dashboard-password',
  'traffic',
]);
/** Subcommands whose own subcommand (the second word) has the flags. */
const GROUPS = new Set(['sysproxy', 'service', 'share']);
const helps = new Map<string, string>();
function helpOf(words: string[]): string {
  const key = words.join(' ');
  if (!helps.has(key)) helps.set(key, run([...words, '--help']).out);
  return helps.get(key)!;
}

/** `gatehop …` lines of the shell blocks: the command's words and its flags (up to `--`). */
function commandLines(): Array<{ where: string; line: string; words: string[]; flags: string[] }> {
  const out: Array<{ where: string; line: string; words: string[]; flags: string[] }> = [];
  for (const b of ALL_BLOCKS) {
    if (!['', 'sh', 'bash', 'ini'].includes(b.lang)) continue;
    for (const raw of b.body.split('\n')) {
      const line = raw.replace(/^\s*(\$ )?(sudo )?/, '');
      const m = /^(?:gatehop|node bin\/gatehop\.js)(\s.*)?$/.exec(line.replace(/\s+#.*$/, ''));
      if (!m) continue;
      const rest = (m[1] ?? '').trim();
      const first = rest.split(/\s+/)[0] ?? '';
      if (first.endsWith(':')) continue; // printed output (gatehop ready:, gatehop check:)
      const words: string[] = [];
      if (SUBCOMMANDS.has(first)) {
        words.push(first);
        const second = rest.split(/\s+/)[1] ?? '';
        if (GROUPS.has(first)) words.push(second.split('|')[0]!);
      } else if (first !== '' && !first.startsWith('-') && !first.startsWith('[')) words.push(first); // an unknown subcommand: --help of it fails below
      const flags = [...rest.split(/\s--(\s|$)/)[0]!.matchAll(/(?<![\w-])--[a-z][a-z0-9-]*/g)].map((f) => f[0]);
      out.push({ where: `${b.file}: ${line.trim()}`, line, words, flags });
    }
  }
  return out;
}

describe('the commands the docs show', () => {
  const lines = commandLines();

  it('finds the commands (the README, the usage page and the troubleshooting page all show some)', () => {
    const files = new Set(lines.map((l) => l.where.split(':')[0]));
    for (const f of ['README.md', 'docs/usage.md', 'docs/troubleshooting.md', 'docs/install.md'])
      expect(files).toContain(f);
    expect(lines.length).toBeGreaterThan(20);
  });

  it('every subcommand exists and every flag is one its --help lists', () => {
    const wrong: string[] = [];
    for (const l of lines) {
      if (l.words[0] && !SUBCOMMANDS.has(l.words[0])) {
        wrong.push(`${l.where}: no subcommand ${l.words[0]}`);
        continue;
      }
      const help = helpOf(l.words);
      for (const f of l.flags)
        if (f !== '--help' && f !== '--version' && !new RegExp(`(^|[\\s,])${f}(\\s|,|$|=)`, 'm').test(help))
          wrong.push(`${l.where}: ${f} is not in \`gatehop ${l.words.join(' ')} --help\``);
    }
    expect(wrong).toEqual([]);
  }, 120_000);
});

describe('the configs the docs show', () => {
  const KEYS = new Set(Object.keys(configSchema.shape));

  it('docs/gatehop.example.yaml passes gatehop check', () => {
    const r = run(
      ['check', '--config', join(ROOT, 'docs/gatehop.example.yaml')],
      mkdtempSync(join(tmpdir(), 'gh-docs-')),
    );
    expect(r.out).toMatch(/the config, profiles and cached list are fine/);
    expect(r.status).toBe(0);
  });

  it('every YAML block that is a Gatehop config passes gatehop check', () => {
    const configs = ALL_BLOCKS.filter((b) => b.lang === 'yaml');
    expect(configs.length).toBeGreaterThanOrEqual(2);
    const wrong: string[] = [];
    for (const b of configs) {
      const data = parseYaml(b.body) as Record<string, unknown>;
      const unknown = Object.keys(data).filter((k) => !KEYS.has(k));
      if (unknown.length) {
        wrong.push(`${b.file}: keys ${unknown.join(', ')} are not config keys`);
        continue;
      }
      const dir = mkdtempSync(join(tmpdir(), 'gh-docs-'));
      const file = join(dir, 'gatehop.yaml');
      writeFileSync(file, b.body);
      const r = run(['check', '--config', file], dir);
      if (r.status !== 0) wrong.push(`${b.file}: ${r.out.trim()}`);
    }
    expect(wrong).toEqual([]);
  }, 60_000);

  it("docs/config.md's table of every key is the schema's", () => {
    const doc = readFileSync(CONFIG_DOC, 'utf8');
    expect(doc, 'run: node --import tsx scripts/config-reference.ts --write').toBe(withTable(doc));
  });
});

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}
function anchors(file: string): Set<string> {
  const body = text(file).replace(/^ *```[\s\S]*?^ *```/gm, '');
  return new Set([...body.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]!)));
}

describe('the links between the docs', () => {
  it('every relative link lands on a file, and every #anchor on a heading of it', () => {
    const broken: string[] = [];
    for (const file of DOCS) {
      const body = text(file).replace(/^ *```[\s\S]*?^ *```/gm, '');
      for (const m of body.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1]!;
        if (/^(https?|mailto):/.test(target)) continue;
        const [path, anchor] = target.split('#') as [string, string | undefined];
        const abs = path === '' ? join(ROOT, file) : resolve(dirname(join(ROOT, file)), path);
        if (!existsSync(abs)) {
          broken.push(`${file}: ${target} (no such file)`);
          continue;
        }
        if (anchor && abs.endsWith('.md') && !anchors(relative(ROOT, abs)).has(anchor))
          broken.push(`${file}: ${target} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("answers the three readers one link from the README: a quick start, the home server, Clash users' questions", () => {
    const readme = text('README.md');
    for (const link of [
      'docs/troubleshooting.md',
      'docs/install.md',
      'docs/install.md#a-home-server',
      'docs/privacy.md',
      'docs/config.md',
      'docs/coming-from-clash.md',
      'docs/honesty.md',
      'CONTRIBUTING.md',
      'README.zh-CN.md',
      'README.fa.md',
    ])
      expect(readme).toContain(`](${link})`);
    expect(readme.split('\n').length).toBeLessThan(200);
    expect(readme.indexOf('## Quick start')).toBeLessThan(1500);
  });
});
