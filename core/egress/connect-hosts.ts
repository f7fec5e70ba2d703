/**
 * The distinct destinations connects through an egress reached and failed to reach since the last
 * take (#60): the health monitor tells "every connect fails, to many places" (the node's uplink or
 * resolver is dead: urgent) from "one site is down" (a user retrying it must not move them from
 * node to node). Bounded: past MAX_HOSTS names a set stops growing, which is already "many".
 */
import { ErrorCodes, isGatehopError } from '../common/index.js';

export const MAX_HOSTS = 64;

/**
 * A connect its client gave up on counts as failed to its place only after this long: a tab closed
 * at once says nothing about the node, a client that waited seconds for a connect that never came
 * (a browser's, a program's own timeout shorter than the egress's 15 s) does.
 */
export const GAVE_UP_COUNTS_AFTER_MS = 3_000;

/** Whether a failed connect, started at `startedAt`, says something about the node. */
export function countsAgainstNode(aborted: boolean, startedAt: number, now = Date.now()): boolean {
  return !aborted || now - startedAt >= GAVE_UP_COUNTS_AFTER_MS;
}

/**
 * A connect that failed because the node's resolver did (silent, or SERVFAIL), not because the
 * name does not exist (NXDOMAIN is an answer) or the destination did not answer.
 */
export function isNameFailure(err: unknown): boolean {
  if (!isGatehopError(err)) return false;
  return err.code === ErrorCodes.DNS_TIMEOUT || (err.code === ErrorCodes.EGRESS_FAILED && /SERVFAIL/.test(err.message));
}

export interface ConnectHostCounts {
  /** Distinct destinations a connect reached. */
  ok: number;
  /** Distinct destinations a connect failed to reach (not counting clients that gave up). */
  failed: number;
  /** Of those, the ones whose name the node's resolver failed to answer. */
  failedNames: number;
}

export class ConnectHosts {
  #ok = new Set<string>();
  #failed = new Set<string>();
  #failedNames = new Set<string>();

  ok(host: string): void {
    if (this.#ok.size < MAX_HOSTS) this.#ok.add(host.toLowerCase());
  }

  /** A connect to `host` failed; `err` says whether its name did. */
  failed(host: string, err: unknown): void {
    if (this.#failed.size < MAX_HOSTS) this.#failed.add(host.toLowerCase());
    if (isNameFailure(err) && this.#failedNames.size < MAX_HOSTS) this.#failedNames.add(host.toLowerCase());
  }

  /** The counts since the last take, and a fresh start. */
  take(): ConnectHostCounts {
    const counts = { ok: this.#ok.size, failed: this.#failed.size, failedNames: this.#failedNames.size };
    this.#ok = new Set();
    this.#failed = new Set();
    this.#failedNames = new Set();
    return counts;
  }
}
