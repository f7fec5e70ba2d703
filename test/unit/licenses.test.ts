/**
 * A binary distribution carries its dependencies' notices (#62): THIRD_PARTY_NOTICES.txt is what
 * the lockfile gives, every licence is one Gatehop (Apache-2.0) may ship, and lwIP's is there.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const script = join(ROOT, 'scripts/licenses.mjs');

describe('npm run licenses', () => {
  it('lists lwIP and every production dependency with its licence', () => {
    const table = execFileSync(process.execPath, [script], { encoding: 'utf8' });
    expect(table).toMatch(/^lwIP\s+2\.1\.3.*BSD-3-Clause/m);
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      license: string;
    };
    for (const name of Object.keys(pkg.dependencies)) expect(table).toMatch(new RegExp(`^${name}\\s`, 'm'));
    expect(table).toMatch(/^react\s.*window/m);
    expect(pkg.license).toBe('Apache-2.0');
    expect(readFileSync(join(ROOT, 'LICENSE'), 'utf8')).toMatch(/Apache License\s+Version 2\.0, January 2004/);
  });

  it('finds the notices file up to date and every licence allowed', () => {
    const r = spawnSync(process.execPath, [script, '--check'], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });
});
