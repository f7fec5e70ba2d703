import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync, existsSync } from 'node:fs';
import { ErrorCodes, GatehopError } from '../common/index.js';

interface Entry {
  readonly salt: Buffer;
  readonly hash: Buffer;
}

const LINE = /^([^:\s]+):([0-9a-fA-F]+):([0-9a-fA-F]{64})$/;

/**
 * Proxy users from an auth file of `user:salt:sha256hex` lines, hash = sha256(salt || password),
 * salt as hex. Blank lines and `#` comments are ignored.
 */
export class Credentials {
  readonly #users: ReadonlyMap<string, Entry>;
  // Compared against when the user is unknown, so timing does not reveal which names exist.
  readonly #dummy: Entry = { salt: randomBytes(16), hash: randomBytes(32) };

  private constructor(users: Map<string, Entry>) {
    this.#users = users;
  }

  static parse(text: string, source = 'auth file'): Credentials {
    const users = new Map<string, Entry>();
    text.split(/\r?\n/).forEach((raw, i) => {
      const line = raw.trim();
      if (line === '' || line.startsWith('#')) return;
      const m = LINE.exec(line);
      if (!m || m[2]!.length % 2 !== 0) {
        throw new GatehopError(
          ErrorCodes.AUTH_FILE_INVALID,
          `${source} line ${i + 1}: expected user:salthex:sha256hex`,
        );
      }
      users.set(m[1]!, { salt: Buffer.from(m[2]!, 'hex'), hash: Buffer.from(m[3]!, 'hex') });
    });
    if (users.size === 0) {
      throw new GatehopError(ErrorCodes.AUTH_FILE_INVALID, `${source} has no users`);
    }
    return new Credentials(users);
  }

  static load(path: string): Credentials {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      throw new GatehopError(ErrorCodes.AUTH_FILE_INVALID, `cannot read auth file ${path}: ${(err as Error).message}`, {
        cause: err,
      });
    }
    return Credentials.parse(text, `auth file ${path}`);
  }

  get size(): number {
    return this.#users.size;
  }

  /** Constant-time in the password and independent of whether the user exists. */
  verify(username: string, password: string): boolean {
    const entry = this.#users.get(username);
    const { salt, hash } = entry ?? this.#dummy;
    const actual = hashPassword(salt, password);
    return timingSafeEqual(actual, hash) && entry !== undefined;
  }
}

export function hashPassword(salt: Buffer, password: string): Buffer {
  return createHash('sha256').update(salt).update(password, 'utf8').digest();
}

export function formatAuthLine(username: string, password: string, salt = randomBytes(16)): string {
  if (!/^[^:\s]+$/.test(username)) {
    throw new GatehopError(ErrorCodes.AUTH_FILE_INVALID, `user name "${username}" must not contain ':' or spaces`);
  }
  return `${username}:${salt.toString('hex')}:${hashPassword(salt, password).toString('hex')}`;
}

/**
 * Writes or replaces the user's line, keeping every other line as it was. The file is replaced
 * atomically (write a sibling, then rename) with mode 0600 so a crash never leaves half a file.
 */
export function upsertAuthFile(path: string, username: string, password: string): void {
  const line = formatAuthLine(username, password);
  const lines = existsSync(path) ? readFileSync(path, 'utf8').split(/\r?\n/) : [];
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const at = lines.findIndex((l) => l.trim().split(':')[0] === username);
  if (at >= 0) lines[at] = line;
  else lines.push(line);
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${lines.join('\n')}\n`, { mode: 0o600 });
  renameSync(tmp, path);
}
