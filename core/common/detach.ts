import { errorToJson } from './errors.js';

/** What detach reports to: a pino logger, or anything with its error(obj, msg) shape. */
export interface DetachLog {
  error(obj: Record<string, unknown>, msg: string): void;
}

/**
 * Runs work that nobody awaits (a timer's round, an event handler's reaction) with an owner for its
 * failure: a rejection is logged once at error with its stable code, never left to reach the
 * process's fatal 'unhandledRejection' handler. The fatal handlers are for real bugs; a failed
 * URL test round, a store read that threw or a probe that broke is not one, and the next round
 * runs as usual.
 */
export function detach(log: DetachLog, event: string, work: Promise<unknown>): void {
  work.catch((err: unknown) => {
    const { code, message } = errorToJson(err);
    log.error({ event, errCode: code, err: message }, `${event} failed: ${message}`);
  });
}

/** A rejection that needs no report (a cleanup whose failure changes nothing): awaited by nobody on purpose. */
export function ignoreRejection(work: Promise<unknown>): void {
  work.catch(() => {});
}
