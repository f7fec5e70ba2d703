import { chmodSync, lstatSync, mkdirSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ErrorCodes, GatehopError } from './errors.js';

/** sockaddr_un's path is 108 bytes with its NUL; a longer data dir's sockets live in the runtime dir. */
const MAX_SOCKET_PATH = 100;

/**
 * Where a socket of this core's named `name` is: `<data-dir>/run/<name>` (one per core, so cores
 * side by side never meet), else, for a data dir too deep for a socket's path, in the user's
 * runtime dir (or /tmp/gatehop-<uid>) under a name made from the data dir. Its folder is made
 * private by makePrivateDir before anything listens there.
 */
export function runSocketPath(dataDir: string, name: string): string {
  const inData = join(dataDir, 'run', name);
  if (inData.length <= MAX_SOCKET_PATH) return inData;
  const base = process.env.XDG_RUNTIME_DIR ?? join(tmpdir(), `gatehop-${process.getuid?.() ?? 'user'}`);
  const id = createHash('sha256').update(dataDir).digest('hex').slice(0, 16);
  return join(base, `gatehop-${id}`, name);
}

/**
 * Makes `dir` (and what is missing above it) a folder only this user can enter, and refuses one
 * that is a link or belongs to someone else (#59): the fallback under /tmp has a name anyone can
 * predict, and a folder another user made first would let them replace the socket in it, and so
 * stand in for Gatehop.
 */
export function makePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const uid = process.getuid?.();
  if (uid === undefined) return; // Windows: no owners to check this way
  const refuse = (why: string): never => {
    throw new GatehopError(
      ErrorCodes.LISTEN_FAILED,
      `${dir}: ${why}; a socket there could be replaced by someone else`,
    );
  };
  const st = lstatSync(dir);
  if (!st.isDirectory()) refuse('not a folder (a link?)');
  if (st.uid !== uid) refuse(`owned by uid ${st.uid}, not this user (${uid})`);
  // Whoever may write in the folder above may rename this one and put their own in its place,
  // unless that folder is sticky (as /tmp is) and this one is ours. So the folder above must be
  // ours (a data dir), or a sticky one of root's (/tmp), and not writable by everyone unless
  // sticky. Group-writable is taken: a desktop's umask 002 makes the data dir so (its group is
  // the user's own), and the data dir already holds the token and the database.
  const up = lstatSync(dirname(dir));
  const sticky = (up.mode & 0o1000) !== 0;
  const ownedRight = up.uid === uid || (sticky && up.uid === 0);
  if (!ownedRight || (!sticky && (up.mode & 0o002) !== 0))
    refuse(`the folder above it (${dirname(dir)}) can be written by others`);
  chmodSync(dir, 0o700);
}
