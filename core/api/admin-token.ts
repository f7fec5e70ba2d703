import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { ErrorCodes, GatehopError } from '../common/index.js';

/**
 * The admin API's bearer token: the configured one, else the one in `file`, else a new random one
 * written there with mode 0600 (created exclusively, so two starts never race to different tokens).
 */
export function loadOrCreateAdminToken(
  configured: string | undefined,
  file: string,
): { token: string; source: 'config' | 'file' | 'generated' } {
  if (configured) return { token: configured, source: 'config' };
  try {
    const token = readFileSync(file, 'utf8').trim();
    if (token.length >= 16) {
      // A token file others can read is a token others can use: tighten it.
      if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
      return { token, source: 'file' };
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new GatehopError(ErrorCodes.CONFIG_INVALID, `cannot read admin token ${file}: ${(err as Error).message}`, {
        cause: err,
      });
  }
  const token = randomBytes(32).toString('base64url');
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    writeFileSync(file, `${token}\n`, { mode: 0o600, flag: 'w' });
    chmodSync(file, 0o600);
  } catch (err) {
    throw new GatehopError(ErrorCodes.CONFIG_INVALID, `cannot write admin token ${file}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  return { token, source: 'generated' };
}
