import { isIP } from 'node:net';
import { createHash, randomBytes, scrypt, scryptSync, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { promisify } from 'node:util';
import { readFileSync, renameSync, writeFileSync, existsSync } from 'node:fs';
import { ErrorCodes, GatehopError } from '../common/index.js';

/** A user's stored proof: scrypt (what `gatehop passwd` writes), or the older salted SHA-256. */
export type Entry =
  | {
      readonly kind: 'scrypt';
      readonly logN: number;
      readonly r: number;
      readonly p: number;
      readonly salt: Buffer;
      readonly hash: Buffer;
    }
  | { readonly kind: 'sha256'; readonly salt: Buffer; readonly hash: Buffer };

const LEGACY_LINE = /^([^:\s]+):([0-9a-fA-F]+):([0-9a-fA-F]{64})$/;
const SCRYPT_LINE = /^([^:\s]+):scrypt:(\d{1,2}):(\d{1,2}):(\d{1,2}):([0-9a-fA-F]{16,128}):([0-9a-fA-F]{64})$/;

/** scrypt's cost for new lines: N = 2^15, r = 8, p = 1 (32 MiB, ~50–100 ms on one core). */
const SCRYPT = { logN: 15, r: 8, p: 1 } as const;
const scryptAsync = promisify(scrypt) as (pw: string, salt: Buffer, len: number, o: ScryptOptions) => Promise<Buffer>;

/** A client that failed waits this long before its next try, doubling per failure up to the cap. */
const BACKOFF_FIRST_MS = 250;
const BACKOFF_MAX_MS = 8_000;
/** Clients remembered for their failures, and verified passwords kept (each a bounded map). */
const MAX_CLIENTS = 1024;
const MAX_VERIFIED = 256;
const VERIFIED_TTL_MS = 10 * 60_000;
/**
 * Tries one client may have waiting its turn; more are refused at once, with no hashing (a client
 * that sends guesses faster than its back-off lets them run gains nothing by sending more).
 */
export const MAX_PENDING_PER_CLIENT = 8;
/**
 * Tries waiting or running from every client together (#59): a client is an address (an IPv6 /64),
 * and one that has many (a LAN, a /64) gets no more from having them; past this, a new try is
 * refused at once, unhashed. Right passwords already verified are not tries.
 */
export const MAX_PENDING_TOTAL = 32;
/** Derivations at once, whoever asks: each scrypt holds 32 MiB and a core of libuv's pool. */
export const MAX_DERIVING = 2;

/** The key derivation a check runs (the real one: scrypt off the main thread, or SHA-256). */
export type Derive = (entry: Entry, password: string) => Promise<Buffer>;

export interface CredentialsOptions {
  now?: () => number;
  /** Tests count the derivations with this; the default is the real one. */
  derive?: Derive;
}

/**
 * Proxy users from an auth file, one `user:scrypt:logN:r:p:salthex:hashhex` line each (or the older
 * `user:salthex:sha256hex`, hash = sha256(salt || password), still read). Blank lines and `#`
 * comments are ignored. Verifying runs scrypt off the main thread; a client that gets a password
 * wrong waits before its next try (250 ms doubling to 8 s, tries queued behind each other), so a
 * flood of guesses is slowed while right passwords from it still get in, and others are not
 * slowed at all. A password verified once is remembered for 10 minutes (an HTTP client sends it
 * with every request). Every check costs the same whether the name exists or not and whatever
 * kind of line it has (see #dummy). At most MAX_PENDING_PER_CLIENT tries of one client wait; a try
 * whose connection is gone by its turn is not hashed.
 */
export class Credentials {
  readonly #users: ReadonlyMap<string, Entry>;
  /**
   * Derived when the user is unknown, and after a legacy (SHA-256) user's own check where the file
   * also has scrypt lines: every check then costs one derivation of the file's dearest kind, so
   * timing tells neither which names exist nor which are stored the older way.
   */
  readonly #dummy: Entry;
  readonly #derive: Derive;
  /** Per client address: failures in a row and when its next try may run. */
  readonly #clients = new Map<string, { failures: number; nextAt: number }>();
  /** Per client address: the end of its last queued try (one try at a time per client). */
  readonly #queue = new Map<string, Promise<void>>();
  /** Per client address: its tries waiting or running (at most MAX_PENDING_PER_CLIENT). */
  readonly #pending = new Map<string, number>();
  /** sha256(user, password) of recent successes → until when. */
  readonly #verified = new Map<string, number>();
  readonly #now: () => number;
  #pendingTotal = 0;
  #deriving = 0;
  readonly #deriveQueue: Array<() => void> = [];

  private constructor(users: Map<string, Entry>, opts: CredentialsOptions) {
    this.#users = users;
    this.#now = opts.now ?? Date.now;
    this.#derive = opts.derive ?? derive;
    this.#dummy = dummyFor(users.values());
  }

  static parse(text: string, source = 'auth file', opts: CredentialsOptions = {}): Credentials {
    const users = new Map<string, Entry>();
    text.split(/\r?\n/).forEach((raw, i) => {
      const line = raw.trim();
      if (line === '' || line.startsWith('#')) return;
      const m = SCRYPT_LINE.exec(line);
      if (m && m[5]!.length % 2 === 0) {
        const [logN, r, p] = [Number(m[2]), Number(m[3]), Number(m[4])];
        if (logN < 10 || logN > 20 || r < 1 || r > 32 || p < 1 || p > 16)
          throw new GatehopError(ErrorCodes.AUTH_FILE_INVALID, `${source} line ${i + 1}: scrypt cost out of range`);
        users.set(m[1]!, {
          kind: 'scrypt',
          logN,
          r,
          p,
          salt: Buffer.from(m[5]!, 'hex'),
          hash: Buffer.from(m[6]!, 'hex'),
        });
        return;
      }
      const legacy = LEGACY_LINE.exec(line);
      if (!legacy || legacy[2]!.length % 2 !== 0) {
        throw new GatehopError(
          ErrorCodes.AUTH_FILE_INVALID,
          `${source} line ${i + 1}: expected user:scrypt:logN:r:p:salthex:hashhex (gatehop passwd writes one)`,
        );
      }
      users.set(legacy[1]!, {
        kind: 'sha256',
        salt: Buffer.from(legacy[2]!, 'hex'),
        hash: Buffer.from(legacy[3]!, 'hex'),
      });
    });
    if (users.size === 0) {
      throw new GatehopError(ErrorCodes.AUTH_FILE_INVALID, `${source} has no users`);
    }
    return new Credentials(users, opts);
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

  /** Users still stored with the older SHA-256 proof (the log says so once at start). */
  get legacyUsers(): number {
    return [...this.#users.values()].filter((e) => e.kind === 'sha256').length;
  }

  /**
   * Whether `password` is `username`'s. Constant-time in the password and independent of whether
   * the user exists; waits first while `client` (its address) is backed off after failures. Refused
   * without hashing when MAX_PENDING_PER_CLIENT of its tries already wait, or when `gone()` says
   * the connection that asked has closed by the time its turn comes.
   */
  async verify(username: string, password: string, address = '', gone: () => boolean = () => false): Promise<boolean> {
    const client = clientOf(address);
    if (this.#recentlyVerified(username, password)) {
      this.#settle(client, true);
      return true;
    }
    const waiting = this.#pending.get(client) ?? 0;
    if (waiting >= MAX_PENDING_PER_CLIENT || this.#pendingTotal >= MAX_PENDING_TOTAL) return false;
    this.#pending.set(client, waiting + 1);
    this.#pendingTotal++;
    // Tries from one client run one after another, so guesses sent in parallel queue too.
    const before = this.#queue.get(client) ?? Promise.resolve();
    let done!: () => void;
    const mine = new Promise<void>((r) => (done = r));
    this.#queue.set(client, mine);
    try {
      await before;
      await this.#turnOf(client);
      if (gone()) return false;
      return await this.#check(username, password, client);
    } finally {
      done();
      if (this.#queue.get(client) === mine) this.#queue.delete(client);
      this.#pendingTotal--;
      const left = (this.#pending.get(client) ?? 1) - 1;
      if (left > 0) this.#pending.set(client, left);
      else this.#pending.delete(client);
    }
  }

  /** What checking `username` derives, by kind and cost: the same for every name (tests read it). */
  workFor(username: string): string[] {
    return this.#plan(username).map(describeWork);
  }

  /** The entries a check of `username` derives: its own (or the dummy), then the dummy as padding where cheaper. */
  #plan(username: string): Entry[] {
    const entry = this.#users.get(username);
    if (!entry) return [this.#dummy];
    return entry.kind === 'sha256' && this.#dummy.kind === 'scrypt' ? [entry, this.#dummy] : [entry];
  }

  /** A password verified in the last VERIFIED_TTL_MS: no derivation, no wait. */
  #recentlyVerified(username: string, password: string): boolean {
    const until = this.#verified.get(verifiedKey(username, password));
    return until !== undefined && until > this.#now();
  }

  async #check(username: string, password: string, client: string): Promise<boolean> {
    let ok: boolean;
    if (this.#recentlyVerified(username, password)) ok = true;
    else {
      const [first, ...padding] = this.#plan(username);
      ok = (await this.#matches(first!, password)) && this.#users.has(username);
      for (const pad of padding) await this.#matches(pad, password);
      if (ok) remember(this.#verified, verifiedKey(username, password), this.#now() + VERIFIED_TTL_MS, MAX_VERIFIED);
    }
    this.#settle(client, ok);
    return ok;
  }

  /** One derivation, at most MAX_DERIVING at once (the rest wait their turn in order). */
  async #matches(entry: Entry, password: string): Promise<boolean> {
    if (this.#deriving >= MAX_DERIVING) await new Promise<void>((r) => this.#deriveQueue.push(r));
    else this.#deriving++;
    try {
      const actual = await this.#derive(entry, password);
      return actual.length === entry.hash.length && timingSafeEqual(actual, entry.hash);
    } finally {
      // The slot goes to the next waiter as it is (the count stays), or is given back.
      const next = this.#deriveQueue.shift();
      if (next) next();
      else this.#deriving--;
    }
  }

  /** Waits until a client that failed may try again. */
  async #turnOf(client: string): Promise<void> {
    const c = this.#clients.get(client);
    const waitMs = c ? c.nextAt - this.#now() : 0;
    if (waitMs > 0) await new Promise((r) => setTimeout(r, waitMs));
  }

  #settle(client: string, ok: boolean): void {
    if (ok) {
      this.#clients.delete(client);
      return;
    }
    const c = this.#clients.get(client) ?? { failures: 0, nextAt: 0 };
    c.failures++;
    c.nextAt = this.#now() + backoffMs(c.failures);
    remember(this.#clients, client, c, MAX_CLIENTS);
  }
}

/** sha256(user, NUL, password): what the verified map keeps instead of the password. */
function verifiedKey(username: string, password: string): string {
  return createHash('sha256').update(username).update('\0').update(password).digest('base64');
}

/**
 * Whose tries these are: an IPv4 address as it is (a mapped one unwrapped), an IPv6 address by its
 * /64, which one host or one home network is handed whole.
 */
export function clientOf(address: string): string {
  const v4 = /^(?:::ffff:)?(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (v4) return v4[1]!;
  if (isIP(address) !== 6) return address;
  return `${expandIpv6(address).slice(0, 4).join(':')}::/64`;
}

/** The eight groups of an IPv6 address, written out. */
function expandIpv6(address: string): string[] {
  const [head, tail] = address.split('%')[0]!.split('::') as [string, string | undefined];
  const a = head ? head.split(':') : [];
  const b = tail !== undefined && tail !== '' ? tail.split(':') : [];
  const fill = tail === undefined ? [] : Array.from({ length: 8 - a.length - b.length }, () => '0');
  return [...a, ...fill, ...b].map((g) => g.toLowerCase().replace(/^0+(?=.)/, ''));
}

function backoffMs(failures: number): number {
  return Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** Math.max(0, failures - 1));
}

/** Sets a key in a map kept in insertion order, dropping the oldest past `max`. */
function remember<V>(map: Map<string, V>, key: string, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  while (map.size > max) map.delete(map.keys().next().value!);
}

/** The real derivation: scrypt on libuv's pool, or the older SHA-256. */
function derive(entry: Entry, password: string): Promise<Buffer> {
  return entry.kind === 'scrypt'
    ? scryptAsync(password, entry.salt, entry.hash.length, scryptOptions(entry.logN, entry.r, entry.p))
    : Promise.resolve(hashPassword(entry.salt, password));
}

/**
 * The entry derived for an unknown name: the file's dearest scrypt cost if it has scrypt lines
 * (what `gatehop passwd` writes), else SHA-256 like its legacy lines. Random salt and hash: it
 * never matches.
 */
function dummyFor(entries: Iterable<Entry>): Entry {
  let dearest: Extract<Entry, { kind: 'scrypt' }> | null = null;
  for (const e of entries) {
    if (e.kind !== 'scrypt') continue;
    if (!dearest || 2 ** e.logN * e.r * e.p > 2 ** dearest.logN * dearest.r * dearest.p) dearest = e;
  }
  return dearest
    ? { kind: 'scrypt', logN: dearest.logN, r: dearest.r, p: dearest.p, salt: randomBytes(16), hash: randomBytes(32) }
    : { kind: 'sha256', salt: randomBytes(16), hash: randomBytes(32) };
}

function describeWork(e: Entry): string {
  return e.kind === 'scrypt' ? `scrypt N=2^${e.logN} r=${e.r} p=${e.p}` : 'sha256';
}

function scryptOptions(logN: number, r: number, p: number): ScryptOptions {
  const N = 2 ** logN;
  return { N, r, p, maxmem: 256 * N * r + 1024 * 1024 };
}

/** The older proof: sha256(salt || password). Still read from auth files; never written. */
export function hashPassword(salt: Buffer, password: string): Buffer {
  return createHash('sha256').update(salt).update(password, 'utf8').digest();
}

/** A new auth file line for `username`: scrypt with a fresh salt. */
export function formatAuthLine(username: string, password: string, salt = randomBytes(16)): string {
  if (!/^[^:\s]+$/.test(username)) {
    throw new GatehopError(ErrorCodes.AUTH_FILE_INVALID, `user name "${username}" must not contain ':' or spaces`);
  }
  const hash = scryptSync(password, salt, 32, scryptOptions(SCRYPT.logN, SCRYPT.r, SCRYPT.p));
  return `${username}:scrypt:${SCRYPT.logN}:${SCRYPT.r}:${SCRYPT.p}:${salt.toString('hex')}:${hash.toString('hex')}`;
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
