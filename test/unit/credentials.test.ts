import { scryptSync } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Credentials, formatAuthLine, hashPassword, upsertAuthFile } from '../../core/proxy/index.js';
import {
  clientOf,
  MAX_DERIVING,
  MAX_PENDING_PER_CLIENT,
  MAX_PENDING_TOTAL,
  type Entry,
} from '../../core/proxy/credentials.js';

/** What the real derivation gives for `password` (the test's derive stands in for it). */
function hashOf(entry: Entry, password: string): Buffer {
  return entry.kind === 'scrypt'
    ? scryptSync(password, entry.salt, entry.hash.length, {
        N: 2 ** entry.logN,
        r: entry.r,
        p: entry.p,
        maxmem: 64 << 20,
      })
    : hashPassword(entry.salt, password);
}

describe('auth file credentials', () => {
  it('still verifies the older user:salt:sha256(salt||password) lines', async () => {
    const salt = Buffer.from('00112233', 'hex');
    const line = `bob:00112233:${hashPassword(salt, 's3cret').toString('hex')}`;
    const creds = Credentials.parse(`# users\n\n${line}\n`);
    expect(creds.legacyUsers).toBe(1);
    expect(await creds.verify('bob', 's3cret')).toBe(true);
    expect(await creds.verify('bob', 's3cret ', 'a')).toBe(false);
    expect(await creds.verify('eve', 's3cret', 'b')).toBe(false);
  });

  it('writes scrypt lines (#34 item 5) and verifies them', async () => {
    const line = formatAuthLine('carol', 'pa55');
    expect(line).toMatch(/^carol:scrypt:15:8:1:[0-9a-f]{32}:[0-9a-f]{64}$/);
    const creds = Credentials.parse(line);
    expect(creds.legacyUsers).toBe(0);
    expect(await creds.verify('carol', 'pa55')).toBe(true);
    expect(await creds.verify('carol', 'pa56', 'x')).toBe(false);
  });

  it('names the line of a malformed entry', () => {
    expect(() => Credentials.parse('ok:00:' + '0'.repeat(64) + '\nbroken line')).toThrow(/line 2/);
    expect(() => Credentials.parse('# nothing')).toThrow(/no users/);
    expect(() => Credentials.parse(`x:scrypt:30:8:1:${'00'.repeat(16)}:${'0'.repeat(64)}`)).toThrow(
      /cost out of range/,
    );
  });

  it('upserts a user, keeps the others, and writes mode 0600', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gh-auth-'));
    const file = join(dir, 'users');
    writeFileSync(file, `${formatAuthLine('keep', 'x')}\n`);
    upsertAuthFile(file, 'alice', 'one');
    upsertAuthFile(file, 'alice', 'two');
    const creds = Credentials.load(file);
    expect(creds.size).toBe(2);
    expect(await creds.verify('alice', 'two')).toBe(true);
    expect(await creds.verify('alice', 'one', 'c')).toBe(false);
    expect(await creds.verify('keep', 'x')).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8').trim().split('\n')).toHaveLength(2);
  });

  it('refuses user names with a colon', () => {
    expect(() => formatAuthLine('a:b', 'x')).toThrow(/must not contain/);
  });

  it('a flood of wrong passwords from one client is slowed (tries queue, the wait doubles); its right one still gets in, and other clients are not slowed', async () => {
    const creds = Credentials.parse(formatAuthLine('dave', 'right'));
    const t0 = performance.now();
    const wrong = await Promise.all([1, 2, 3, 4].map((i) => creds.verify('dave', `wrong-${i}`, '10.9.9.9')));
    const floodMs = performance.now() - t0;
    expect(wrong).toEqual([false, false, false, false]);
    // Four tries sent at once from one address run one after another, each after the back-off of
    // the failures before it: at least 250 + 500 + 1000 ms (a lower bound: timers never fire early).
    expect(floodMs).toBeGreaterThanOrEqual(1_700);
    // Started together: the flooding address waits out its back-off (2 s after four failures), the
    // other address does not, so it is answered first; both right passwords get in.
    const order: string[] = [];
    const flooder = creds.verify('dave', 'right', '10.9.9.9').then((ok) => (order.push('flooder'), ok));
    const other = creds.verify('dave', 'right', '10.8.8.8').then((ok) => (order.push('other'), ok));
    expect(await Promise.all([flooder, other])).toEqual([true, true]);
    expect(order).toEqual(['other', 'flooder']);
    // Getting in forgave the flooder: its next try is answered before that of an address with one
    // failure (250 ms to wait), started at the same moment.
    expect(await creds.verify('dave', 'wrong', '10.7.7.7')).toBe(false);
    const after: string[] = [];
    await Promise.all([
      creds.verify('dave', 'right', '10.9.9.9').then(() => after.push('forgiven')),
      creds.verify('dave', 'right', '10.7.7.7').then(() => after.push('backed-off')),
    ]);
    expect(after).toEqual(['forgiven', 'backed-off']);
  }, 20_000);
});

describe('what a check costs (#47)', () => {
  const legacyLine = (user: string, password: string): string => {
    const salt = Buffer.from('00112233445566778899aabbccddeeff', 'hex');
    return `${user}:${salt.toString('hex')}:${hashPassword(salt, password).toString('hex')}`;
  };

  it('an unknown name, a scrypt user and a legacy SHA-256 user each cost one scrypt of the same cost', () => {
    const creds = Credentials.parse(`${formatAuthLine('new', 'x')}\n${legacyLine('old', 'y')}\n`);
    const scrypt = creds.workFor('new');
    expect(scrypt).toEqual(['scrypt N=2^15 r=8 p=1']);
    expect(creds.workFor('nobody')).toEqual(scrypt);
    expect(creds.workFor('old')).toEqual(['sha256', ...scrypt]);
  });

  it('where every line is legacy, an unknown name costs a SHA-256 like a real one (no scrypt to tell them apart)', () => {
    const creds = Credentials.parse(legacyLine('old', 'y'));
    expect(creds.workFor('nobody')).toEqual(['sha256']);
    expect(creds.workFor('old')).toEqual(['sha256']);
  });

  it('a flood from one client: at most MAX_PENDING_PER_CLIENT tries wait, the rest are refused unhashed; a try whose connection is gone is not hashed', async () => {
    let derived = 0;
    let now = 0;
    const creds = Credentials.parse(formatAuthLine('dave', 'right'), 'test', {
      // A minute passes at every reading of the clock: each back-off is over by its turn, so the
      // queue drains without waiting and only the cap decides what is hashed.
      now: () => (now += 60_000),
      derive: (entry) => {
        derived++;
        return Promise.resolve(Buffer.alloc(entry.hash.length));
      },
    });
    const flood = await Promise.all(
      Array.from({ length: 50 }, (_, i) => creds.verify('dave', `guess-${i}`, '10.9.9.9')),
    );
    expect(flood.every((ok) => !ok)).toBe(true);
    expect(derived).toBe(MAX_PENDING_PER_CLIENT);
    derived = 0;
    expect(await creds.verify('dave', 'right', '10.9.9.9', () => true)).toBe(false);
    expect(derived).toBe(0);
  });

  it('addresses do not buy tries (#59): an IPv6 /64 is one client, all clients together have MAX_PENDING_TOTAL tries waiting and MAX_DERIVING derivations at once; a right password verified before still gets in', async () => {
    expect(clientOf('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(clientOf('2001:db8:1:2::ffff:9')).toBe('2001:db8:1:2::/64');
    expect(clientOf('2001:0db8:0001:0002:0:0:0:1')).toBe('2001:db8:1:2::/64');
    expect(clientOf('::ffff:192.0.2.7')).toBe('192.0.2.7');
    expect(clientOf('192.0.2.7')).toBe('192.0.2.7');
    // The clock stands still until the flood is in; then 9 s pass at every reading, so every
    // back-off (8 s at most) is over by its turn and only the caps decide what is hashed.
    let t = 0;
    let ticking = false;
    let deriving = 0;
    let most = 0;
    let derived = 0;
    let gate: Promise<void> = Promise.resolve();
    const creds = Credentials.parse(formatAuthLine('erin', 'right'), 'test', {
      now: () => (ticking ? (t += 9_000) : t),
      derive: async (entry, password) => {
        derived++;
        most = Math.max(most, ++deriving);
        await gate;
        deriving--;
        return password === 'right' ? hashOf(entry, password) : Buffer.alloc(entry.hash.length);
      },
    });
    // The real user got in once: remembered for ten minutes.
    expect(await creds.verify('erin', 'right', '192.0.2.1')).toBe(true);
    derived = 0;
    let release!: () => void;
    gate = new Promise<void>((r) => (release = r));
    // 64 addresses of one /64 are one client; then 200 IPv4 addresses, one guess each.
    const sixes = Array.from({ length: 64 }, (_, i) => creds.verify('erin', `g${i}`, `2001:db8:1:2::${i + 1}`));
    const fours = Array.from({ length: 200 }, (_, i) =>
      creds.verify('erin', `h${i}`, `10.${(i >> 8) & 255}.${i & 255}.1`),
    );
    // Meanwhile the right password, verified before, gets in at once from anywhere.
    expect(await creds.verify('erin', 'right', '198.51.100.9')).toBe(true);
    expect(most).toBeLessThanOrEqual(MAX_DERIVING);
    ticking = true;
    release();
    const all = await Promise.all([...sixes, ...fours]);
    expect(all.every((ok) => !ok)).toBe(true);
    // Hashed: at most 8 of the /64's and, with them, MAX_PENDING_TOTAL in all; two at a time.
    expect(derived).toBe(MAX_PENDING_TOTAL);
    expect(most).toBe(MAX_DERIVING);
  });
});
