import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, writeFileSync } from 'node:fs';
import { mkdir, open, rename } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Writes `data` so a reader sees the old file or the new one, never half of one: a temp file
 * beside it, fsync, rename. Throws the fs error (ENOSPC, EACCES …) for the caller to name.
 */
export function writeFileAtomic(path: string, data: string | Uint8Array, opts: { mode?: number } = {}): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, data, { mode: opts.mode ?? 0o600 });
  const fd = openSync(tmp, 'r+');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}

let asyncWrites = 0;

/** writeFileAtomic off the main loop: the write and the fsync run in libuv's pool (a 32 MiB rule set). */
export async function writeFileAtomicAsync(
  path: string,
  data: string | Uint8Array,
  opts: { mode?: number } = {},
): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  // Its own temp name: two writes of one path may overlap while they wait on the disk.
  const tmp = `${path}.${process.pid}.${++asyncWrites}.tmp`;
  const fh = await open(tmp, 'w', opts.mode ?? 0o600);
  try {
    await fh.writeFile(data);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, path);
}
