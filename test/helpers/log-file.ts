import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';

/**
 * The text a core wrote to `--log-file PATH`: the log rotates (pino-roll), so PATH = dir/name.ext
 * is written as dir/name.1.ext, dir/name.2.ext, …; this reads them all, oldest first.
 */
export function readLogFile(path: string): string {
  const dir = dirname(path);
  if (!existsSync(dir)) return '';
  const ext = extname(path);
  const stem = basename(path, ext);
  const numbered = readdirSync(dir)
    .map((f) => ({ f, m: new RegExp(`^${escape(stem)}\\.(\\d+)${escape(ext)}$`).exec(f) }))
    .filter((x) => x.m)
    .sort((a, b) => Number(a.m![1]) - Number(b.m![1]));
  return numbered.map((x) => readFileSync(join(dir, x.f), 'utf8')).join('');
}

/** The JSON lines of a rotated log file. */
export function readLogLines<T = Record<string, unknown>>(path: string): T[] {
  return readLogFile(path)
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as T);
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
