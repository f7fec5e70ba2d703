/**
 * One proxy session's flow as it ended (#64): what the proxy knows at the end, handed to whoever
 * counts traffic (core/traffic) without knowing the proxy. Types only.
 */

/** Where the rule table sent the flow (null: it ended before it was routed). */
export type FlowRoute = 'TUNNEL' | 'DIRECT' | 'REJECT';

/**
 * How the flow ended, in a user's words: `closed` (either side hung up), `reset` (a peer reset it,
 * or Gatehop cut it: a revoked device, the user's Close), `timeout` (handshake, connect or idle),
 * `refused` (a rule or HTTPS-only), `error` (anything else; see errCode), `shutdown` (Gatehop stopped).
 */
export type FlowEnd = 'closed' | 'reset' | 'timeout' | 'refused' | 'error' | 'shutdown';

export interface FlowRecord {
  /** The session's number on its listener (`lan-` is prefixed for the shared listener's). */
  readonly id: string;
  /** Which listener took it: this computer's (`local`), or "Share with this network" (`lan`). */
  readonly listener: 'local' | 'lan';
  readonly kind: 'socks5' | 'http' | 'capture';
  /** The client's address:port. */
  readonly client: string;
  /** The proxy user or shared device it authenticated as (null: none). */
  readonly user: string | null;
  /** The destination as the client named it. */
  readonly host: string;
  readonly port: number;
  readonly route: FlowRoute | null;
  /** The rule that placed it (`DOMAIN-SUFFIX`, `MATCH`, …) and its payload. */
  readonly rule: string | null;
  readonly rulePayload: string | null;
  /** The node the flow went through (null: DIRECT, REJECT, or not dialled). */
  readonly nodeId: string | null;
  /** The program that opened it, where a PROCESS-NAME rule looked it up (null: not known). */
  readonly program: string | null;
  readonly bytesUp: number;
  readonly bytesDown: number;
  readonly startedAt: number;
  readonly endedAt: number;
  readonly end: FlowEnd;
  /** The stable code of what ended it (`ECONNRESET`, `GH_ERR_…`), or null. */
  readonly errCode: string | null;
}
