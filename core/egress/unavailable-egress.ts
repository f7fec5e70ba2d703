import { ErrorCodes, GatehopError } from '../common/index.js';
import type { Egress, EgressState, EgressStats, EgressTcpConnection, EgressUdpSocket } from '../contracts/index.js';

/** An egress with nowhere to send traffic yet: every connect fails at once, naming why. */
export class UnavailableEgress implements Egress {
  readonly stats: EgressStats = { bytesUp: 0, bytesDown: 0, sessionsActive: 0, sessionsTotal: 0, failures: 0 };
  readonly state: EgressState = 'connecting';

  constructor(
    readonly id: string,
    private readonly reason: string,
  ) {}

  async connectTcp(host: string, port: number): Promise<EgressTcpConnection> {
    this.stats.failures++;
    throw new GatehopError(ErrorCodes.EGRESS_FAILED, `connect to ${host}:${port}: ${this.reason}`);
  }

  async bindUdp(): Promise<EgressUdpSocket> {
    throw new GatehopError(ErrorCodes.EGRESS_FAILED, `UDP: ${this.reason}`);
  }

  async resolve(host: string): Promise<string[]> {
    throw new GatehopError(ErrorCodes.EGRESS_DNS_NOT_FOUND, `resolve ${host}: ${this.reason}`);
  }

  async close(): Promise<void> {}
}
