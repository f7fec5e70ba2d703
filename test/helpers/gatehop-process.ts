import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { readLogLines } from './log-file.js';
import { until } from './fds.js';

const BIN = resolve(import.meta.dirname, '../../bin/gatehop.js');

export interface LogLine {
  event?: string;
  level?: number | string;
  msg?: string;
  [k: string]: unknown;
}

/**
 * The `gatehop` CLI as a user runs it, in a mount namespace of its own whose /etc/resolv.conf
 * points at nothing (and whose /etc/hosts holds `hosts`): a name it resolves itself fails at once,
 * on this machine, instead of asking the machine's real resolver, which no test may reach.
 */
export class GatehopProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  #stdout = '';
  #stderr = '';

  constructor(
    readonly dir: string,
    args: string[],
    /** `user`: the core runs as this uid and gid (dropped with setpriv after the mounts). */
    opts: { hosts?: Record<string, string>; user?: { uid: number; gid: number } } = {},
  ) {
    const resolv = join(dir, 'resolv.conf');
    const hosts = join(dir, 'hosts');
    writeFileSync(resolv, 'nameserver 127.0.0.1\noptions timeout:1 attempts:1\n');
    writeFileSync(
      hosts,
      ['127.0.0.1 localhost', ...Object.entries(opts.hosts ?? {}).map(([n, a]) => `${a} ${n}`), ''].join('\n'),
    );
    const q = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;
    const asUser = opts.user ? `setpriv --reuid ${opts.user.uid} --regid ${opts.user.gid} --clear-groups -- ` : '';
    const script = `mount --bind ${q(resolv)} /etc/resolv.conf && mount --bind ${q(hosts)} /etc/hosts && exec ${asUser}${q(process.execPath)} ${q(BIN)} ${args.map(q).join(' ')}`;
    this.child = spawn('unshare', ['-m', '--propagation', 'private', 'sh', '-c', script], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stdout!.on('data', (c: Buffer) => (this.#stdout += c.toString()));
    this.child.stderr!.on('data', (c: Buffer) => (this.#stderr = (this.#stderr + c.toString()).slice(-8000)));
    this.exited = new Promise((r) => this.child.once('exit', (code) => r(code)));
  }

  get stdout(): string {
    return this.#stdout;
  }

  /** Resolves once it said `gatehop ready:`; rejects at once if it exited, or after `timeoutMs`. */
  ready(timeoutMs = 60_000): Promise<true> {
    return untilReady(
      () => ({ stdout: this.#stdout, stderr: this.#stderr, exited: this.child.exitCode !== null }),
      timeoutMs,
    );
  }

  get stderr(): string {
    return this.#stderr;
  }

  /** JSON lines of its log file (`--log-file`; rotated, so read from its numbered files). */
  log(file: string): LogLine[] {
    return readLogLines<LogLine>(file);
  }

  async stop(): Promise<number | null> {
    if (this.child.exitCode === null) this.child.kill('SIGTERM');
    return this.exited;
  }
}

/** `gatehop <args>` to completion (a subcommand), with its output. */
export function runGatehop(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((res) => {
    const c = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    c.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    c.on('exit', (code) => res({ code, stdout, stderr }));
  });
}

/** Until a gatehop process (its output so far, and whether it exited) says it is ready. */
export function untilReady(
  state: () => { stdout: string; stderr: string; exited: boolean },
  timeoutMs = 60_000,
): Promise<true> {
  return until(
    () => {
      const s = state();
      if (s.stdout.includes('gatehop ready:')) return true;
      return s.exited ? Promise.reject(new Error(`gatehop exited: ${s.stderr}`)) : undefined;
    },
    timeoutMs,
    () => `gatehop ready (stderr: ${state().stderr})`,
  );
}
