import type { TLSSocket } from 'node:tls';
import { Duplex } from 'node:stream';
import type { ClientKeySource, ServerKeyMethod2 } from './control-messages.js';
import type { DataChannel } from './data-channel.js';
import { ReliableChannel, type ReliableChannelOptions } from './reliable.js';

/** The TLS engine's transport: its writes become P_CONTROL_V1 payloads, in-order payloads are pushed in. */
export class ControlDuplex extends Duplex {
  constructor(private readonly send: (chunk: Buffer) => void) {
    super();
  }

  override _read(): void {}

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    // A stuck control channel (its backlog full) fails the TLS session, which ends the key cleanly.
    try {
      this.send(chunk);
    } catch (err) {
      cb(err as Error);
      return;
    }
    cb();
  }
}

/**
 * Everything OpenVPN keeps per key_id (notes §7.1): the reliability layer's ids and queues, the TLS
 * session, the key-method exchange and, once done, the data channel.
 */
export class KeyState {
  readonly rel: ReliableChannel;
  tlsIn: ControlDuplex | null = null;
  tls: TLSSocket | null = null;
  plain: Buffer = Buffer.alloc(0);
  clientKeys: ClientKeySource | null = null;
  serverKm: ServerKeyMethod2 | null = null;
  data: DataChannel | null = null;
  /** Our reset (hard or soft) has been acked, or the server's arrived: TLS may start. */
  started = false;

  constructor(
    readonly keyId: number,
    reliable: ReliableChannelOptions,
  ) {
    this.rel = new ReliableChannel(reliable);
  }

  close(): void {
    this.rel.close();
    this.tls?.removeAllListeners('data');
    this.tls?.on('error', () => {});
    this.tls?.destroy();
    this.tls = null;
    this.tlsIn = null;
  }
}
