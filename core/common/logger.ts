import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import pino, { type Logger, type LevelWithSilent, type StreamEntry } from 'pino';
import pretty from 'pino-pretty';
import type { LogTap } from './log-tap.js';

export type { Logger } from 'pino';

export interface LoggerOptions {
  level: LevelWithSilent;
  /** JSON lines are appended here as well; null for console only. */
  file: string | null;
  /** Pretty, coloured console output (default: when stdout is a TTY). */
  pretty?: boolean;
  /** Lines at info and above are also handed to this tap (the admin API's log events). */
  tap?: LogTap;
}

/**
 * Console (pretty on a TTY, JSON otherwise) plus an optional JSON file. All streams are synchronous
 * in-process ones (no worker thread), so the last lines before a crash or exit are not lost.
 * A log file that cannot be written (full disk, read-only) never takes the process down: the error
 * is reported once on stderr and the file stream is dropped.
 */
export function createLogger(opts: LoggerOptions): Logger {
  const usePretty = opts.pretty ?? process.stdout.isTTY === true;
  const streams: StreamEntry[] = [
    { level: 'trace', stream: usePretty ? pretty({ colorize: true, sync: true }) : process.stdout },
  ];
  if (opts.file) {
    try {
      mkdirSync(dirname(opts.file), { recursive: true });
      const file = pino.destination({ dest: opts.file, sync: false, mkdir: true });
      let failed = false;
      file.on('error', (err: Error) => {
        if (failed) return;
        failed = true;
        process.stderr.write(`gatehop: log file ${opts.file} failed (${err.message}); logging to console only\n`);
      });
      streams.push({ level: 'trace', stream: file });
    } catch (err) {
      process.stderr.write(`gatehop: cannot open log file ${opts.file}: ${(err as Error).message}\n`);
    }
  }
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
