import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { ErrorCodes, GatehopError } from '../common/index.js';

/**
 * The admin API's bearer token: the configured one, else the one in `file`, else a new random one
 * written there with mode 0600 (created exclusively, so two starts never race to different tokens).
 */
export function loadOrCreateAdminToken(
  configured: string | undefined,
  file: string,
  raced = false,
): { token: string; source: 'config' | 'file' | 'generated' } {
  if (configured) return { token: configured, source: 'config' };
  try {
    const token = readFileSync(file, 'utf8').trim();
    if (token.length >= 16) {
      // A token file others can read is a token others can use: tighten it.
      if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
      return { token, source: 'file' };
    }
    // A short or empty file is not a token: one written by another start as we read is read again once.
    if (raced) throw new GatehopError(ErrorCodes.CONFIG_INVALID, `admin token ${file} holds no usable token`);
    unlinkSync(file);
  } catch (err) {
    if (err instanceof GatehopError) throw err;
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new GatehopError(ErrorCodes.CONFIG_INVALID, `cannot read admin token ${file}: ${(err as Error).message}`, {
        cause: err,
      });
  }
  const token = randomBytes(32).toString('base64url');
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    // Created exclusively ('wx'), owner-only from its first byte: a file that appeared meanwhile
    // (another start, or someone's planted file) is not written through.
    writeFileSync(file, `${token}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    // Another start made it between our read and our write: read theirs (once; a name that exists
    // but does not read, such as a dangling link, is refused below rather than written through).
    if ((err as NodeJS.ErrnoException).code === 'EEXIST' && !raced)
      return loadOrCreateAdminToken(undefined, file, true);
    throw new GatehopError(ErrorCodes.CONFIG_INVALID, `cannot write admin token ${file}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  return { token, source: 'generated' };
}
