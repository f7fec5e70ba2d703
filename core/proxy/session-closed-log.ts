import type { Logger } from '../common/index.js';

/** Errors that are part of normal life (a peer hung up): logged at debug, not as failures. */
const EXPECTED_ERRNO = new Set(['ECONNRESET', 'EPIPE', 'ERR_STREAM_PREMATURE_CLOSE', 'ECONNABORTED']);

/** What a session's end says in the log: at info when an unexpected error ended it, else at debug. */
export function logSessionClosed(
  log: Logger,
  s: { reason: string; kind: string; bytesUp: number; bytesDown: number; startedAt: number },
  err?: Error,
): void {
  const fields = {
    event: 'session-closed',
    reason: s.reason,
    kind: s.kind,
    bytesUp: s.bytesUp,
    bytesDown: s.bytesDown,
    durationMs: Date.now() - s.startedAt,
    ...(err ? { errCode: errCodeOf(err), err: err.message } : {}),
  };
  if (err && !EXPECTED_ERRNO.has(errCodeOf(err))) log.info(fields, 'session closed with error');
  else log.debug(fields, 'session closed');
}

function errCodeOf(err: Error): string {
  const code = (err as NodeJS.ErrnoException).code;
  return typeof code === 'string' ? code : err.name;
}
