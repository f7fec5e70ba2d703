import * as nodeFs from 'node:fs';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import pino, { type Logger, type LevelWithSilent, type StreamEntry } from 'pino';
import pretty from 'pino-pretty';
import pinoRoll from 'pino-roll';
import type { LogTap } from './log-tap.js';

export type { Logger } from 'pino';

export interface LoggerOptions {
  level: LevelWithSilent;
  /**
   * JSON lines are appended here as well, rotated (openLogger): `gatehop.log` becomes
   * `gatehop.1.log`, `gatehop.2.log`, … with `current.log` linked to the one in use where a link can
   * be made (canLinkCurrentLog). null for console only.
   */
  file: string | null;
  /** Pretty, coloured console output (default: when stdout is a TTY). */
  pretty?: boolean;
  /** Rotation of `file` (default LOG_FILE_MAX_BYTES and LOG_FILES_KEPT; tests use small ones). */
  rotate?: { maxBytes: number; keep: number };
  /** Lines at info and above are also handed to this tap (the admin API's log events). */
  tap?: LogTap;
  /** The file system `current.log`'s link is tried on (tests: one that refuses links as Windows does). */
  linkFs?: LinkFs;
}

/** What is needed to find out whether `current.log` can be a symbolic link here. */
export type LinkFs = Pick<typeof nodeFs, 'lstatSync' | 'symlinkSync' | 'unlinkSync'>;

/**
 * Whether `current.log` can be a link to the file in use: not where making one is refused (a
 * standard Windows user without developer mode gets EPERM; some file systems have none), and not
 * where `current.log` is a plain file (pino-roll would fail with EEXIST at every start and leave no
 * log at all). Then there is no `current.log`: the one in use is the highest-numbered file.
 */
export function canLinkCurrentLog(dir: string, fs: LinkFs = nodeFs): boolean {
  try {
    if (!fs.lstatSync(join(dir, 'current.log')).isSymbolicLink()) return false;
  } catch {
    // No current.log yet: try making a link.
  }
  const probe = join(dir, `.link-probe-${process.pid}`);
  try {
    fs.symlinkSync('gatehop.log', probe);
  } catch {
    return false;
  }
  try {
    fs.unlinkSync(probe);
  } catch {
    // Left behind: harmless, and the next probe's name is another pid's.
  }
  return true;
}

/** One log file's size before the next is started. */
export const LOG_FILE_MAX_BYTES = 10 * 1024 * 1024;
/** Old log files kept besides the one in use; older ones are removed. */
export const LOG_FILES_KEPT = 4;

/**
 * Console (pretty on a TTY, JSON otherwise) plus, when `file` is set, a JSON file rotated at
 * LOG_FILE_MAX_BYTES with LOG_FILES_KEPT old files kept (pino-roll, in this thread: no transport
 * worker, so the last lines before an exit are not lost to a thread that did not flush). The files
 * take at most (LOG_FILES_KEPT + 1) × LOG_FILE_MAX_BYTES (50 MiB), each file over by at most what
 * was logged in one turn of the event loop (pino-roll rolls when the stream drains, after it). A
 * log file that
 * cannot be written (full disk, read-only) never takes the process down: the error is reported
 * once on stderr, and lines go on to the console while the file's stream keeps failing (it is not
 * taken out of the stream list; what it fails to write is lost).
 */
export async function openLogger(opts: LoggerOptions): Promise<Logger> {
  if (!opts.file) return createLogger(opts);
  let file: StreamEntry['stream'] | null = null;
  try {
    mkdirSync(dirname(opts.file), { recursive: true });
    const symlink = canLinkCurrentLog(dirname(opts.file), opts.linkFs);
    const roll = await pinoRoll({
      file: opts.file,
      size: `${Math.max(1, Math.round((opts.rotate?.maxBytes ?? LOG_FILE_MAX_BYTES) / 1024))}k`,
      limit: { count: opts.rotate?.keep ?? LOG_FILES_KEPT, removeOtherLogFiles: true },
      symlink,
      mkdir: true,
      // Synchronous: every line is on disk when the call returns (the last lines before a crash
      // too), and the stream drains after each turn of the event loop, when pino-roll rolls. An
      // asynchronous stream under a steady flow of lines never drains, and the file outgrew its cap.
      sync: true,
    });
    let failed = false;
    roll.on('error', (err: Error) => {
      if (failed) return;
      failed = true;
      process.stderr.write(`gatehop: log file ${opts.file} failed (${err.message}); logging to console only\n`);
    });
    file = roll;
  } catch (err) {
    process.stderr.write(`gatehop: cannot open log file ${opts.file}: ${(err as Error).message}\n`);
  }
  return build(opts, file);
}

/** Console only (and the tap): `file` is ignored here; openLogger opens it. */
export function createLogger(opts: LoggerOptions): Logger {
  return build(opts, null);
}

function build(opts: LoggerOptions, file: StreamEntry['stream'] | null): Logger {
  const usePretty = opts.pretty ?? process.stdout.isTTY === true;
  const streams: StreamEntry[] = [
    { level: 'trace', stream: usePretty ? pretty({ colorize: true, sync: true }) : process.stdout },
  ];
  if (file) streams.push({ level: 'trace', stream: file });
  if (opts.tap) streams.push({ level: 'info', stream: opts.tap.stream });
  return pino(
    {
      level: opts.level,
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    pino.multistream(streams),
  );
}

/** A logger that drops everything; for tests and library use without a host logger. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
