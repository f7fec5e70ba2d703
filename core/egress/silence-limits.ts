/** Pings a quiet tunnel's gateway gets, each with the full round-trip allowance, before it counts as silent. */
export const PINGS_BEFORE_SILENT = 4;
/**
 * Linux's least TCP retransmission timeout (TCP_RTO_MIN): over a TCP carrier a lost segment holds
 * every echo behind it for at least this long, doubling with each loss of the same segment.
 */
const TCP_MIN_RTO_MS = 200;
/** Losses of one segment in a row a TCP carrier is given time to recover from (RTO, then 2·RTO). */
const TCP_RETRANSMITS = 2;
/** The longest round trip allowed for: a server slower than this to answer is as good as gone. */
const MAX_RTT_ALLOWANCE_MS = 10_000;
/**
 * How long an echo is waited for. Far past the limit on purpose: an echo that comes back late
 * still teaches the round trip (a node that became slow), and with a timeout at the allowance
 * none would ever be measured (found by bench:liveness: every echo of a node 800 ms away timed
 * out against an allowance learnt at 1 ms, and the node was called silent at 2.1 s).
 */
export const ECHO_TIMEOUT_MS = MAX_RTT_ALLOWANCE_MS;

/**
 * How long a tunnel may be quiet before it counts as silent, from what its gateway's echoes take.
 *
 * A fixed limit either leaves a dead node late (6 s before #24) or drops a slow one that works: a
 * node 800 ms away whose echo is lost once has not answered after 2 s. So the tunnel asks early
 * (`askAfterMs`, then once per tick), and the limit is the configured floor or, when the node is
 * slow, enough for `PINGS_BEFORE_SILENT` echoes each to come back within the round trip's high
 * mark (smoothed as RFC 6298 smooths TCP's: srtt + 4·rttvar). With 5 % loss each way, four echoes
 * all lost is ~1 in 10⁴ quiet spells; a node on the rig (1 ms away) is called silent after 2 s.
 *
 * Over a TCP carrier (OpenVPN over TCP, SSTP) echoes are not independent chances: they queue behind
 * a lost segment until the carrier's retransmission gets through. There the limit is one echo's
 * round-trip high mark plus `TCP_RETRANSMITS` retransmission timeouts, each from srtt. Found by
 * bench:liveness: with 10 % loss each way, an OpenVPN-over-TCP node was called silent at 2.05 s
 * while it worked.
 */
export class SilenceLimits {
  #srttMs: number | null = null;
  #rttvarMs = 0;

  constructor(
    /** The configured floor (switching.unresponsiveMs). */
    readonly unresponsiveMs: number,
    /** How often the tunnel checks its silence (and sends an echo while quiet). */
    readonly tickMs: number,
    /** What carries the tunnel: datagrams (UDP) or a byte stream that retransmits (TCP, TLS). */
    readonly carrier: 'datagram' | 'stream' = 'datagram',
  ) {}

  /** A gateway echo came back after `rttMs`. */
  observe(rttMs: number): void {
    if (!(rttMs >= 0)) return;
    if (this.#srttMs === null) {
      this.#srttMs = rttMs;
      this.#rttvarMs = rttMs / 2;
      return;
    }
    this.#rttvarMs = 0.75 * this.#rttvarMs + 0.25 * Math.abs(this.#srttMs - rttMs);
    this.#srttMs = 0.875 * this.#srttMs + 0.125 * rttMs;
  }

  /** Quiet this long and the gateway is asked (and asked again every tick). */
  get askAfterMs(): number {
    return Math.max(this.tickMs, Math.floor(this.unresponsiveMs / 3));
  }

  /** How long an echo may take to come back: the round trip's high mark (1 s before any was measured). */
  get rttAllowanceMs(): number {
    const high = this.#srttMs === null ? 1_000 : this.#srttMs + 4 * this.#rttvarMs;
    return Math.min(MAX_RTT_ALLOWANCE_MS, Math.ceil(high));
  }

  /** Quiet this long, though asked, is silence. */
  get limitMs(): number {
    const rtt = this.rttAllowanceMs;
    if (this.carrier === 'datagram')
      return Math.max(this.unresponsiveMs, this.askAfterMs + PINGS_BEFORE_SILENT * this.tickMs + rtt);
    // RTO, then 2·RTO: 2^n - 1 timeouts for n retransmissions. From srtt, not the high mark: echoes
    // over TCP that met a loss already widened rttvar, and three times that left a blackholed
    // node 300 ms away unnoticed for 9.7 s (bench:liveness).
    const retransmitMs = (2 ** TCP_RETRANSMITS - 1) * ((this.#srttMs ?? rtt) + TCP_MIN_RTO_MS);
    return Math.max(this.unresponsiveMs, Math.ceil(this.askAfterMs + this.tickMs + rtt + retransmitMs));
  }

  get srttMs(): number | null {
    return this.#srttMs;
  }
}
