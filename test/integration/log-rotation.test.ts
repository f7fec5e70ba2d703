import { lstatSync, mkdtempSync, readdirSync, readlinkSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { openLogger, type LinkFs } from '../../core/common/index.js';
import { eventually } from '../helpers/fds.js';

const logFiles = (dir: string): string[] => readdirSync(dir).filter((f) => /^gatehop\.\d+\.log$/.test(f));
const bytesIn = (dir: string): number => logFiles(dir).reduce((n, f) => n + statSync(join(dir, f)).size, 0);

describe('the log file (#32: bounded on disk)', () => {
  it('rotates at the size cap and keeps only the newest files, removing those of earlier runs too', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gh-logs-'));
    // An earlier run's files, beyond what is kept.
    for (const n of [1, 2, 3, 4, 5]) writeFileSync(join(dir, `gatehop.${n}.log`), 'x'.repeat(10_000) + '\n');
    const maxBytes = 64 * 1024;
    const keep = 2;
    const logger = await openLogger({
      level: 'info',
      file: join(dir, 'gatehop.log'),
      pretty: false,
      rotate: { maxBytes, keep },
    });
    const line = 'y'.repeat(500);
    // Twenty caps' worth, well past what may stay on disk, 20 lines a turn of the event loop.
    for (let i = 0; i < (20 * maxBytes) / 600; i++) {
      logger.info({ event: 'filler', i }, line);
      if (i % 20 === 19) await new Promise((r) => setImmediate(r));
    }
    await eventually(() => logFiles(dir).length <= keep + 1, 5_000, 'old files removed');
    const files = logFiles(dir);
    expect(files.length).toBeLessThanOrEqual(keep + 1);
    // The earlier run's low-numbered files are gone; numbering went on after them.
    expect(files).not.toContain('gatehop.1.log');
    // The stated worst case: (keep + 1) files of the cap, each over by at most one turn's lines.
    expect(bytesIn(dir)).toBeLessThanOrEqual((keep + 1) * (maxBytes + 20 * 700));
    // current.log points at the file in use.
    expect(lstatSync(join(dir, 'current.log')).isSymbolicLink()).toBe(true);
    expect(files).toContain(readlinkSync(join(dir, 'current.log')).split('/').pop());
  });

  it.each([
    ['a file system that refuses links as Windows does for a standard user (EPERM)', 'EPERM'],
    ['a file system without links (ENOSYS)', 'ENOSYS'],
  ])('%s: the log file is written and rotated without current.log (#47)', async (_what, code) => {
    const dir = mkdtempSync(join(tmpdir(), 'gh-logs-'));
    const windowsLike: LinkFs = {
      lstatSync,
      unlinkSync,
      symlinkSync: () => {
        throw Object.assign(new Error(`${code}: operation not permitted, symlink`), { code });
      },
    };
    const stderr = vi.spyOn(process.stderr, 'write');
    const logger = await openLogger({
      level: 'info',
      file: join(dir, 'gatehop.log'),
      pretty: false,
      rotate: { maxBytes: 16 * 1024, keep: 2 },
      linkFs: windowsLike,
    });
    for (let i = 0; i < 200; i++) {
      logger.info({ event: 'filler', i }, 'z'.repeat(300));
      if (i % 20 === 19) await new Promise((r) => setImmediate(r));
    }
    await eventually(() => logFiles(dir).length >= 2, 5_000, 'a second file after the cap');
    expect(readdirSync(dir)).not.toContain('current.log');
    expect(stderr.mock.calls.map((c) => String(c[0])).filter((l) => l.includes('log file'))).toEqual([]);
    stderr.mockRestore();
  });

  it('a current.log that is a plain file is left alone and the log still opens (pino-roll threw EEXIST) (#47)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gh-logs-'));
    writeFileSync(join(dir, 'current.log'), 'copied here by hand\n');
    const logger = await openLogger({ level: 'info', file: join(dir, 'gatehop.log'), pretty: false });
    logger.info({ event: 'hello' }, 'hello');
    await eventually(() => logFiles(dir).some((f) => statSync(join(dir, f)).size > 0), 5_000, 'a line');
    expect(lstatSync(join(dir, 'current.log')).isSymbolicLink()).toBe(false);
  });

  it('a log file that cannot be opened leaves the console logger working', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gh-logs-'));
    writeFileSync(join(dir, 'blocker'), ''); // a file where the log directory should be
    const logger = await openLogger({ level: 'silent', file: join(dir, 'blocker', 'gatehop.log'), pretty: false });
    expect(() => logger.info('still works')).not.toThrow();
  });
});
