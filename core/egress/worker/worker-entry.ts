import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ErrorCodes, GatehopError } from '../../common/index.js';

/**
 * The tunnel worker's script: the built tunnel-worker.js beside this file (dist/: the CLI and
 * Electron, which since 17.3 loads worker scripts from inside app.asar). Run from TypeScript
 * source, Node 20 cannot start a .ts worker, so tests and benches bundle one first and name it in
 * GATEHOP_TUNNEL_WORKER (test/helpers/tunnel-worker-bundle.ts).
 */
export function workerScript(): URL {
  const found = findWorkerScript();
  if (found) return found;
  throw new GatehopError(
    ErrorCodes.TUNNEL_WORKER_FAILED,
    'no tunnel worker script: run the built core (npm run build), bundle one (test/helpers/tunnel-worker-bundle.ts), or set tunnel.threads: false',
  );
}

/** The built worker beside this file, looked for once (null: running from source). */
let built: URL | null | undefined;

/** The worker script, or null when there is none (run from source without a bundle). */
export function findWorkerScript(): URL | null {
  if (built === undefined) {
    const js = new URL('./tunnel-worker.js', import.meta.url);
    built = import.meta.url.endsWith('.js') && existsSync(fileURLToPath(js)) ? js : null;
  }
  const bundled = process.env.GATEHOP_TUNNEL_WORKER;
  return built ?? (bundled ? new URL(bundled) : null);
}
