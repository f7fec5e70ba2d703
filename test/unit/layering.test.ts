import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(__dirname, '../..');
const DEPCRUISE = join(ROOT, 'node_modules/.bin/depcruise');

/** Lays out a miniature core/ with the given files and runs the project's layering rules on it. */
function cruise(files: Record<string, string>): Promise<{ code: number; out: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'gh-layers-'));
  copyFileSync(join(ROOT, '.dependency-cruiser.cjs'), join(dir, '.dependency-cruiser.cjs'));
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true } }));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return new Promise((res) => {
    execFile(DEPCRUISE, ['--config', '.dependency-cruiser.cjs', 'core'], { cwd: dir }, (err, stdout, stderr) => {
      res({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, out: stdout + stderr });
    });
  });
}

const egress = {
  'core/egress/index.ts': "export { DirectEgress } from './direct.js';\nexport type { Egress } from './types.js';\n",
  'core/egress/direct.ts': 'export class DirectEgress {}\n',
  'core/egress/types.ts': 'export interface Egress { id: string }\n',
};

describe('layering lint', () => {
  it('passes socks5 importing only the Egress types', async () => {
    const r = await cruise({ ...egress, 'core/socks5/s.ts': "import type { Egress } from '../egress/index.js';\nexport type E = Egress;\n" });
    expect(r.out).toMatch(/no dependency violations/);
    expect(r.code).toBe(0);
  });

  it('fails socks5 importing an egress implementation', async () => {
    const r = await cruise({ ...egress, 'core/socks5/s.ts': "import { DirectEgress } from '../egress/index.js';\nexport const d = DirectEgress;\n" });
    expect(r.code).not.toBe(0);
    expect(r.out).toMatch(/socks5-egress-type-only/);
  });

  it('fails a deep import past a module index and an upward import from common', async () => {
    const r = await cruise({
      ...egress,
      'core/app/a.ts': "import { DirectEgress } from '../egress/direct.js';\nexport const d = DirectEgress;\n",
      'core/common/c.ts': "import type { Egress } from '../egress/index.js';\nexport type E = Egress;\n",
    });
    expect(r.out).toMatch(/index-only/);
    expect(r.out).toMatch(/common-is-the-floor/);
  });

  it('fails netstack knowing about ovpn', async () => {
    const r = await cruise({
      'core/ovpn/index.ts': 'export const o = 1;\n',
      'core/netstack/index.ts': "import { o } from '../ovpn/index.js';\nexport const n = o;\n",
    });
    expect(r.out).toMatch(/low-tier-peers/);
  });
  it('fails sysproxy importing anything of core but common', async () => {
    const r = await cruise({
      'core/store/index.ts': 'export const s = 1;\n',
      'core/sysproxy/index.ts': "import { s } from '../store/index.js';\nexport const p = s;\n",
    });
    expect(r.code).not.toBe(0);
    expect(r.out).toMatch(/sysproxy-knows-only-common/);
  });
});
