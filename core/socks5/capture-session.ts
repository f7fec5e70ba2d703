import type { InboundType } from '../route/index.js';
import { sniffName } from '../router/index.js';
import { readFirstBytes } from './first-bytes.js';
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
    const client = this.socket;
    client.pause();
    const { host, port } = target;
    try {
      let first: Buffer = Buffer.alloc(0);
      let name: string | null = null;
      // Addressed by IP while rules match names: the name comes from the first bytes, as for SOCKS5.
      if (!target.byName && this.ctx.router.sniffs(port)) {
        first = await readFirstBytes(client, first);
        if (this.closed) return;
        const s = sniffName(first);
        name = s && 'name' in s ? s.name : null;
      }
      const decision = await this.route(host, port, 'tcp', name);
      if (this.closed) return;
      if (decision.target === 'REJECT') {
        this.forceClose('rule-reject');
        return;
      }
      const checked = await this.firstBytesIfTls(client, first);
      if (checked === null || this.closed) return;
      if (checked.length > 0) {
        await this.dialWithFirstBytes(client, checked, { host, port }, decision.target);
        return;
      }
      const conn = await this.dial(host, port, decision.target);
      if (this.closed) return;
      this.relay(client, conn.stream, { host, port });
      client.resume();
    } catch (err) {
      if (!this.closed) this.forceClose('connect-failed', err as Error);
    }
  }
}
