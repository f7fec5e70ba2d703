import type { Logger } from '../common/index.js';
import type { Egress, FlowEnd, FlowRecord } from '../contracts/index.js';
import type { Decision } from '../rules/index.js';

/** Errors that are part of normal life (a peer hung up): logged at debug, not as failures. */
const EXPECTED_ERRNO = new Set(['ECONNRESET', 'EPIPE', 'ERR_STREAM_PREMATURE_CLOSE', 'ECONNABORTED']);
const RESET_ERRNO = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);
/** Reasons a front end closes with when a rule or HTTPS-only refused the flow. */
const REFUSAL_REASONS = new Set(['rule-reject', 'https-only']);

/** A session's flow as it ended, before its listener names it (ProxyServer adds `id` and `listener`). */
export type SessionFlowEnd = Omit<FlowRecord, 'id' | 'listener'>;

/** What a session knows at its end (taken before its leases are released). */
export interface SessionAtEnd {
  kind: FlowRecord['kind'];
  client: string;
  user: string | undefined;
  /** host:port it was routed or dialled to; null: it ended before its request. */
  target: string | null;
  decision: Decision | null;
  /** The egress it was leased on (a tunnel's names its node). */
  egress: Egress | null;
  bytesUp: number;
  bytesDown: number;
  startedAt: number;
  /** Ended by cut(): its client was reset. */
  cut: boolean;
}

/** The flow record of a session that ended for `reason` (and `err`), or null if it never asked for anything. */
export function flowEndOf(s: SessionAtEnd, reason: string, err?: Error): SessionFlowEnd | null {
  if (s.target === null) return null;
  const at = s.target.lastIndexOf(':');
  const d = s.decision;
  return {
    kind: s.kind,
    client: s.client,
    user: s.user ?? null,
    host: s.target.slice(0, at).replace(/^\[(.*)\]$/, '$1'),
    port: Number(s.target.slice(at + 1)),
    route: d?.target ?? null,
    rule: d?.rule ?? null,
    rulePayload: d?.payload ?? null,
    nodeId: d?.target === 'TUNNEL' ? (s.egress?.nodeId ?? null) : null,
    program: d?.program ?? null,
    bytesUp: s.bytesUp,
    bytesDown: s.bytesDown,
    startedAt: s.startedAt,
    endedAt: Date.now(),
    end: endOf(reason, err, d, s.cut),
    errCode: err ? errCodeOf(err) : null,
  };
}

/** How a session ended, in the words the Connections view shows. */
function endOf(reason: string, err: Error | undefined, d: Decision | null, cut: boolean): FlowEnd {
  if (reason === 'shutdown') return 'shutdown';
  if (d?.target === 'REJECT' || REFUSAL_REASONS.has(reason)) return 'refused';
  if (reason.endsWith('timeout')) return 'timeout';
  if (cut || reason.startsWith('closed by the user')) return 'reset';
  if (!err) return reason === 'connect-failed' || reason.endsWith('error') ? 'error' : 'closed';
  const code = errCodeOf(err);
  if (RESET_ERRNO.has(code)) return 'reset';
  return /TIMEOUT|TIMEDOUT/i.test(code) ? 'timeout' : 'error';
}

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
