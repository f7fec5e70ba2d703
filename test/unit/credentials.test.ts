import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Credentials, formatAuthLine, hashPassword, upsertAuthFile } from '../../core/socks5/index.js';

describe('auth file credentials', () => {
  it('verifies user:salt:sha256(salt||password) lines', () => {
    const salt = Buffer.from('00112233', 'hex');
    const line = `bob:00112233:${hashPassword(salt, 's3cret').toString('hex')}`;
    const creds = Credentials.parse(`# users\n\n${line}\n`);
    expect(creds.verify('bob', 's3cret')).toBe(true);
    expect(creds.verify('bob', 's3cret ')).toBe(false);
    expect(creds.verify('eve', 's3cret')).toBe(false);
  });

  it('names the line of a malformed entry', () => {
    expect(() => Credentials.parse('ok:00:' + '0'.repeat(64) + '\nbroken line')).toThrow(/line 2/);
    expect(() => Credentials.parse('# nothing')).toThrow(/no users/);
  });

  it('upserts a user, keeps the others, and writes mode 0600', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gh-auth-'));
    const file = join(dir, 'users');
    writeFileSync(file, `${formatAuthLine('keep', 'x')}\n`);
    upsertAuthFile(file, 'alice', 'one');
    upsertAuthFile(file, 'alice', 'two');
    const creds = Credentials.load(file);
    expect(creds.size).toBe(2);
    expect(creds.verify('alice', 'two')).toBe(true);
    expect(creds.verify('alice', 'one')).toBe(false);
    expect(creds.verify('keep', 'x')).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8').trim().split('\n')).toHaveLength(2);
  });

  it('refuses user names with a colon', () => {
    expect(() => formatAuthLine('a:b', 'x')).toThrow(/must not contain/);
  });
});
