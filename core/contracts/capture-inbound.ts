import type { UdpDatagram } from './egress.js';
import type { ClientConnection } from './client-connection.js';

/** The egress side of one captured UDP flow (socks5's UdpRelay). */
export interface CapturedUdp {
  open(): Promise<void>;
  send(payload: Buffer, host: string, port: number, type: string): void;
  close(): void;
}

/**
 * Where captured flows go: the proxy's own sessions (socks5's ProxyServer), so a captured program's
 * connections meet the same rules, egress, switching and limits as the proxy port's.
 */
export interface CaptureInbound {
  adoptCaptured(stream: ClientConnection, target: { host: string; port: number; byName: boolean }): void;
  captureUdp(o: {
    src: { ip: string; port: number };
    onReply: (d: UdpDatagram) => void;
    onError: (err: Error) => void;
  }): CapturedUdp;
}
