import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ruleSetPath } from '../../core/router/index.js';

describe('a rule set’s path stays inside <data-dir>/rule-sets (#45, #59: the admin token is no file read/write)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'gh-rsp-'));
  mkdirSync(join(dataDir, 'rule-sets'));

  it('takes no path (the kept copy), a relative one (in rule-sets/) and an absolute one inside rule-sets/', () => {
    expect(ruleSetPath(dataDir, 'cn', 'yaml', undefined)).toEqual({ path: join(dataDir, 'rule-sets', 'cn.yaml') });
    expect(ruleSetPath(dataDir, 'cn', 'text', undefined)).toEqual({ path: join(dataDir, 'rule-sets', 'cn.txt') });
    expect(ruleSetPath(dataDir, 'cn', 'text', 'mine/cn.list')).toEqual({
      path: join(dataDir, 'rule-sets', 'mine', 'cn.list'),
    });
    expect(ruleSetPath(dataDir, 'cn', 'text', join(dataDir, 'rule-sets', 'elsewhere.txt'))).toEqual({
      path: join(dataDir, 'rule-sets', 'elsewhere.txt'),
    });
  });

  it.each([
    '/etc/passwd',
    '../../.ssh/authorized_keys',
    '..',
    join(dataDir, '..', 'x.txt'),
    // Gatehop's own files beside rule-sets/: its database, the admin token, its settings.
    '../gatehop.db',
    join(dataDir, 'admin-token'),
    '../settings.json',
  ])('refuses %s', (p) => {
    expect(ruleSetPath(dataDir, 'x', 'text', p)).toEqual({
      error: expect.stringMatching(
        /is outside .*rule-sets: rule sets are kept in the data directory's rule-sets folder/,
      ),
    });
  });

  it('refuses a link inside that leads out', () => {
    const outside = join(mkdtempSync(join(tmpdir(), 'gh-rsp-out-')), 'secret.txt');
    writeFileSync(outside, 'secret');
    symlinkSync(outside, join(dataDir, 'rule-sets', 'link.txt'));
    expect(ruleSetPath(dataDir, 'x', 'text', 'link.txt')).toEqual({
      error: expect.stringMatching(/is outside/),
    });
  });
});
