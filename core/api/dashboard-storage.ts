import { mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../common/index.js';
import { ApiFailure } from './http-util.js';

/** A key as dashboards name theirs (zashboard: `zashboard`). */
const KEY = /^[\w.-]{1,64}$/;
/** One dashboard's settings: a page of JSON, not a file store. */
export const MAX_DASHBOARD_VALUE_BYTES = 1024 * 1024;
/** Keys kept at most: one per dashboard the user tried, with room to spare. */
const MAX_KEYS = 16;

/**
 * mihomo's `/storage/:key` extension: a dashboard keeps its own settings in the core, so they
 * follow the user from one browser to the next (zashboard syncs through it at login). One JSON
 * file per key under `<data-dir>/dashboard-storage/`, each bounded, a few keys at most: whatever
 * a page sends is untrusted.
 */
export class DashboardStorage {
  constructor(private readonly dir: string) {}

  /** The stored value, or null when the key has none (a dashboard then keeps its local settings). */
  get(key: string): unknown {
    const path = this.#path(key);
    try {
      return JSON.parse(readFileSync(path, 'utf8')) as unknown;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      // A damaged file is set aside as empty rather than breaking the dashboard's login.
      rmSync(path, { force: true });
      return null;
    }
  }

  put(key: string, text: string): void {
    const path = this.#path(key);
    try {
      JSON.parse(text);
    } catch {
      throw new ApiFailure(400, 'GH_ERR_API_BAD_REQUEST', 'the value must be JSON');
    }
    mkdirSync(this.dir, { recursive: true });
    const keys = readdirSync(this.dir).filter((f) => f.endsWith('.json'));
    if (!keys.includes(`${key}.json`) && keys.length >= MAX_KEYS)
      throw new ApiFailure(507, 'GH_ERR_API_STORAGE_FULL', `at most ${MAX_KEYS} keys are kept`);
    writeFileAtomic(path, text);
  }

  delete(key: string): void {
    rmSync(this.#path(key), { force: true });
  }

  #path(key: string): string {
    if (!KEY.test(key)) throw new ApiFailure(400, 'GH_ERR_API_BAD_REQUEST', 'a key is letters, digits, _ . -');
    return join(this.dir, `${key}.json`);
  }
}
