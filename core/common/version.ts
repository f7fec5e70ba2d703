import { readFileSync } from 'node:fs';

/** package.json's version, read once (from the source tree or from dist/, one level deeper). */
export const GATEHOP_VERSION: string = (() => {
  for (const rel of ['../../package.json', '../../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === 'gatehop' && pkg.version) return pkg.version;
    } catch {
      /* try the next */
    }
  }
  return '0.0.0';
})();
