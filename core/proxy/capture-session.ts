import type { InboundType } from '../rules/index.js';
import { ProxySession } from './session.js';

/**
 * A captured program's TCP connection (`gatehop run`): the capture gateway's stack has ended it and
 * knows where the program meant to go (`target`: the name its fake address stands for, or the
 * address it dialled). From here it is a proxy session like any other: the rule table, DIRECT,
 * REJECT, the tunnel with make-before-break, sniffing and HTTPS-only. The program was told
 * "connected" by the gateway's stack, so a refusal or a failed dial resets its connection.
 */
export class CaptureSession extends ProxySession {
  readonly kind = 'capture';
  protected inType: InboundType = 'TUN';
  protected override readonly directReachesThisMachine = false;

  /** Routes and dials `target`; the program's bytes wait in the stack (its window) until then. */
  async start(target: { host: string; port: number; byName: boolean }): Promise<void> {
    this.socket.pause();
    // Told "connected" by the gateway's stack already: any refusal resets the program's connection.
    await this.openFlow(
      {
        client: this.socket,
        host: target.host,
        port: target.port,
        named: target.byName,
        early: Buffer.alloc(0),
        carries: 'bytes',
      },
      {},
    );
  }
}
