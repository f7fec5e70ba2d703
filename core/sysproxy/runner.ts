import { execFile } from 'node:child_process';
import { ErrorCodes, GatehopError, type ErrorCode } from '../common/index.js';
import type { Runner } from './types.js';

/** A settings tool that failed: which one, its exit code and what it said on stderr. */
export class CommandError extends GatehopError {
  constructor(
    readonly file: string,
    readonly args: readonly string[],
    readonly exitCode: number | null,
    readonly stderr: string,
    code: ErrorCode = ErrorCodes.SYSPROXY_FAILED,
    cause?: unknown,
  ) {
    const said = stderr.trim().split('\n').slice(-3).join(' / ');
    super(
      code,
      `${file} ${args.slice(0, 3).join(' ')}… failed (exit ${exitCode ?? 'none'})${said ? `: ${said}` : ''}`,
      { cause },
    );
    this.name = 'CommandError';
  }
}

/**
 * The most a restore of the OS proxy settings may take before a quit gives up on it: longer than
 * the slowest single command it runs (PowerShell, 30 s; gsettings, kwriteconfig5, networksetup and
 * reg, 10 s each), so one slow command at logoff is waited for. The proxy keeps listening until the
 * restore is done, so the OS is never pointed at a port nobody listens on while it runs.
 */
export const RESTORE_DEADLINE_MS = 40_000;

/**
 * The real runner: execFile (no shell, so no quoting of service names or URLs), a deadline, and
 * stdout/stderr capped at 1 MiB. A missing program is GH_ERR_SYSPROXY_TOOL_MISSING.
 */
export function createExecRunner(env?: NodeJS.ProcessEnv): Runner {
  return (file, args, opts = {}) =>
    new Promise((resolve, reject) => {
      const child = execFile(
        file,
        [...args],
        {
          timeout: opts.timeoutMs ?? 10_000,
          maxBuffer: 1 << 20,
          encoding: 'utf8',
          windowsHide: true,
          ...(env ? { env } : {}),
        },
        (err, stdout, stderr) => {
          if (!err) return resolve({ stdout, stderr });
          const e = err as NodeJS.ErrnoException & { code?: string | number; killed?: boolean };
          if (e.code === 'ENOENT')
            return reject(
              new CommandError(file, args, null, `${file} is not installed`, ErrorCodes.SYSPROXY_TOOL_MISSING, err),
            );
          const exitCode = typeof e.code === 'number' ? e.code : null;
          reject(
            new CommandError(
              file,
              args,
              exitCode,
              e.killed ? `timed out after ${opts.timeoutMs ?? 10_000} ms` : stderr,
              ErrorCodes.SYSPROXY_FAILED,
              err,
            ),
          );
        },
      );
      if (opts.input !== undefined) child.stdin?.end(opts.input);
    });
}

/** The runner over this process's environment. */
export const execRunner: Runner = createExecRunner();
