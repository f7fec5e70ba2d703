import { existsSync, realpathSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';

/**
 * Where a rule set's file is: its `path` resolved against `<data-dir>/rule-sets`, and refused when
 * that is outside that folder (or is a link leading out of it). Why (#45, #59): a rule set is read
 * from its path, and an http set's copy is written there; with any path allowed, whoever holds the
 * admin token (`PUT /settings`) could read or overwrite any file the user can, and with any path in
 * the data directory, Gatehop's own (`../gatehop.db`, the admin token). mihomo keeps providers inside
 * its home directory for the same reason. Without a `path`, the kept copy is
 * `<data-dir>/rule-sets/<name>.yaml|txt|mrs`.
 */
export function ruleSetPath(
  dataDir: string,
  name: string,
  defaultFormat: 'yaml' | 'text' | 'mrs',
  path: string | undefined,
): { path: string } | { error: string } {
  const base = join(dataDir, 'rule-sets');
  if (path === undefined) return { path: join(base, `${name}.${defaultFormat === 'text' ? 'txt' : defaultFormat}`) };
  const root = resolve(base);
  const target = resolve(base, path);
  const inside = (p: string, r: string): boolean => p.startsWith(r + sep);
  let ok = inside(target, root);
  if (ok && existsSync(target) && existsSync(root)) ok = inside(realpathSync(target), realpathSync(root));
  return ok
    ? { path: target }
    : { error: `path ${path} is outside ${root}: rule sets are kept in the data directory's rule-sets folder` };
}
