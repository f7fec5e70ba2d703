import { readFileSync, rmSync } from 'node:fs';
import { z } from 'zod';
import { ErrorCodes, GatehopError, writeFileAtomic, type Logger } from '../common/index.js';

/** The user's settings before Gatehop changed them, what Gatehop set, and who set it. */
export const snapshotSchema = z.object({
  version: z.literal(1),
  backend: z.enum(['gnome', 'kde', 'windows', 'macos']),
  original: z.record(z.string(), z.string().nullable()),
  applied: z.record(z.string(), z.string().nullable()),
  target: z.object({ host: z.string(), port: z.number().int() }),
  pid: z.number().int(),
  /** The process's start time as the OS counts it (Linux: /proc stat field 22), so a reused pid is not mistaken for it. */
  pidStart: z.string().nullable(),
  savedAt: z.number(),
});
export type SysProxySnapshot = z.infer<typeof snapshotSchema>;

/** A second copy (the SQLite store, through the app); the file is the one that must not fail. */
export interface SnapshotMirror {
  save(data: SysProxySnapshot): void;
  load(): unknown;
  clear(): void;
}

/**
 * Keeps the snapshot in a small JSON file written atomically (temp file, fsync, rename), and in a
 * mirror when there is one, so neither a corrupt database nor a torn write loses the user's
 * settings. load() takes the first copy that parses.
 */
export class SnapshotKeeper {
  readonly #log: Logger;

  constructor(
    readonly file: string,
    logger: Logger,
    private readonly mirror: SnapshotMirror | null = null,
  ) {
    this.#log = logger.child({ component: 'sysproxy' });
  }

  /** Throws GH_ERR_SYSPROXY_FAILED when the file cannot be written (then nothing may be changed). */
  save(s: SysProxySnapshot): void {
    try {
      writeFileAtomic(this.file, JSON.stringify(s, null, 1));
    } catch (err) {
      throw new GatehopError(
        ErrorCodes.SYSPROXY_FAILED,
        `cannot save the system proxy snapshot to ${this.file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); the system proxy was not changed`,
        { cause: err },
      );
    }
    try {
      this.mirror?.save(s);
    } catch (err) {
      this.#log.warn(
        { event: 'sysproxy-mirror-failed', err: (err as Error).message },
        'could not copy the system proxy snapshot into the store (the file has it)',
      );
    }
  }

  load(): SysProxySnapshot | null {
    const fromFile = this.#parse(() => JSON.parse(readFileSync(this.file, 'utf8')) as unknown, 'file');
    if (fromFile) return fromFile;
    return this.mirror ? this.#parse(() => this.mirror!.load(), 'store') : null;
  }

  clear(): void {
    rmSync(this.file, { force: true });
    try {
      this.mirror?.clear();
    } catch (err) {
      this.#log.warn(
        { event: 'sysproxy-mirror-failed', err: (err as Error).message },
        'could not clear the store copy of the system proxy snapshot',
      );
    }
  }

  #parse(read: () => unknown, where: string): SysProxySnapshot | null {
    let data: unknown;
    try {
      data = read();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
        this.#log.warn(
          { event: 'sysproxy-snapshot-unreadable', where, err: (err as Error).message },
          `the system proxy snapshot in the ${where} is unreadable`,
        );
      return null;
    }
    if (data === null || data === undefined) return null;
    const parsed = snapshotSchema.safeParse(data);
    if (!parsed.success) {
      this.#log.warn(
        { event: 'sysproxy-snapshot-invalid', where },
        `the system proxy snapshot in the ${where} is not valid; ignoring it`,
      );
      return null;
    }
    return parsed.data;
  }
}
