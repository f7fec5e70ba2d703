import { EventEmitter } from 'node:events';

export interface StackDatagram {
  data: Buffer;
  address: string;
  port: number;
}

export interface UdpPcbOps {
  send(data: Buffer, ip: string, port: number): number;
  localPort(): number;
  close(): void;
}

/** A UDP socket on the user-space stack: send to any IPv4 address and port, receive with source. */
export class StackUdpSocket extends EventEmitter<{ message: [StackDatagram]; close: [] }> {
  readonly id: number;
  #ops: UdpPcbOps | null;
  bytesSent = 0;
  bytesReceived = 0;

  constructor(id: number, ops: UdpPcbOps) {
    super();
    this.id = id;
    this.#ops = ops;
  }

  get closed(): boolean {
    return this.#ops === null;
  }

  get localPort(): number {
    return this.#ops?.localPort() ?? 0;
  }

  /** Returns false when the datagram could not be queued (closed, too large, out of memory). */
  send(data: Buffer, address: string, port: number): boolean {
    if (!this.#ops) return false;
    const err = this.#ops.send(data, address, port);
    if (err === 0) this.bytesSent += data.length;
    return err === 0;
  }

  /** From the stack: a datagram arrived. */
  deliver(d: StackDatagram): void {
    this.bytesReceived += d.data.length;
    this.emit('message', d);
  }

  close(): void {
    const ops = this.#ops;
    if (!ops) return;
    this.#ops = null;
    ops.close();
    this.emit('close');
  }
}
