import { existsSync, mkdtempSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ErrorCodes } from '../../core/common/index.js';
import { loadOrCreateAdminToken } from '../../core/api/index.js';

describe('the admin token file (#34 item 5)', () => {
  it('is created owner-only with a fresh token, and read back as it is next time', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'gh-tok-')), 'sub', 'admin-token');
    const first = loadOrCreateAdminToken(undefined, file);
    expect(first.source).toBe('generated');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(loadOrCreateAdminToken(undefined, file)).toEqual({ token: first.token, source: 'file' });
  });

  it('is never written through a name planted before it (a dangling link): refused with a coded error', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gh-tok-'));
    const target = join(dir, 'where-an-attacker-reads');
    symlinkSync(target, join(dir, 'admin-token'));
    expect(() => loadOrCreateAdminToken(undefined, join(dir, 'admin-token'))).toThrow(
      expect.objectContaining({ code: ErrorCodes.CONFIG_INVALID }),
    );
    expect(existsSync(target)).toBe(false);
  });

  it('a file with no usable token is replaced by a new exclusive one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gh-tok-'));
    writeFileSync(join(dir, 'admin-token'), 'short\n', { mode: 0o644 });
    const t = loadOrCreateAdminToken(undefined, join(dir, 'admin-token'));
    expect(t.source).toBe('generated');
    expect(readFileSync(join(dir, 'admin-token'), 'utf8').trim()).toBe(t.token);
    expect(statSync(join(dir, 'admin-token')).mode & 0o777).toBe(0o600);
  });
});
