/** Counters of the proxy front end; plain numbers so any exporter can read them. */
export interface ProxyStats {
  sessionsActive: number;
  sessionsTotal: number;
  /** Connections refused by admission control (maxSessions). */
  rejected: number;
  /** Connections refused unheard: their address is not one `allowFrom` lets in. */
  refusedByAddress: number;
  bytesUp: number;
  /**
   * Bytes clients have taken (read from us: handed to the kernel and, as far as this machine can
   * see, out of its queues), so a client that reads slowly shows its own rate. Computed by the
   * server from the sessions; read-only.
   */
  readonly bytesDown: number;
  /** Of bytesDown: what sessions that have ended took, and UDP datagrams sent to clients. */
  closedBytesDown: number;
  /** Malformed or unsupported client input, by reason. */
  malformed: Record<string, number>;
  /** SOCKS error replies sent, by reply code in hex ("0x05"); HTTP error statuses by "http-502". */
  errorReplies: Record<string, number>;
  authFailures: number;
  timeouts: { handshake: number; connect: number; idle: number };
  udp: {
    datagramsUp: number;
    datagramsDown: number;
    fragDropped: number;
    foreignDropped: number;
    otherDropped: number;
    rehomed: number;
    /** Packets a rule refused (REJECT). */
    rejected: number;
  };
  /** Idle sessions moved to a new egress at a switch before any byte moved. */
  zeroProgressRetries: number;
  /** Flows (TCP connects, UDP peers) by the target the rule table named: TUNNEL, DIRECT, REJECT. */
  routed: Record<string, number>;
  /** Payload bytes (both directions) by target: TCP sessions when they end, UDP datagrams as they pass. */
  routedBytes: Record<string, number>;
  /** Plain HTTP through the tunnel refused by privacy.httpsOnly. */
  httpsOnlyRefused: number;
}

export function createProxyStats(): ProxyStats {
  return {
    sessionsActive: 0,
    sessionsTotal: 0,
    rejected: 0,
    refusedByAddress: 0,
    bytesUp: 0,
    bytesDown: 0,
    closedBytesDown: 0,
    malformed: {},
    errorReplies: {},
    authFailures: 0,
    timeouts: { handshake: 0, connect: 0, idle: 0 },
    udp: {
      datagramsUp: 0,
      datagramsDown: 0,
      fragDropped: 0,
      foreignDropped: 0,
      otherDropped: 0,
      rehomed: 0,
      rejected: 0,
    },
    zeroProgressRetries: 0,
    routed: {},
    routedBytes: {},
    httpsOnlyRefused: 0,
  };
}

export function bump(record: Record<string, number>, key: string): void {
  record[key] = (record[key] ?? 0) + 1;
}
