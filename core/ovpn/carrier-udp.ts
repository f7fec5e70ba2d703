import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { lookup } from 'node:dns/promises';
import type { Socket } from 'node:net';
import { ErrorCodes, GatehopError, isGatehopError, loadNative } from '../common/index.js';
import { parseSocks5Udp, socks5UdpAssociate, socks5UdpHeader, type UpstreamProxy } from '../reach/index.js';
import type { Carrier, CarrierKind, CarrierOptions, CarrierSink } from './carrier.js';
import { dataEngineStatus, type SealedBatch } from './data-channel.js';
import { NativeUdpCarrier } from './udp-native.js';

/**
 * 1 MiB: with Linux's 208 KiB default a download dropped hundreds to thousands of datagrams
 * whenever the event loop was busy for a moment (RcvbufErrors), each one a TCP loss inside.
 */
const UDP_RCVBUF = 1 << 20;
let warnedNativeUdp = false;

/** Through a SOCKS5 UDP relay: the association's TCP connection, and the header every datagram carries. */
interface Relayed {
  control: Socket;
  header: Buffer;
  port: number;
  display: string;
}

/**
 * OpenVPN over UDP: gatehop-native's batched socket where it runs, else Node's dgram; through the
 * upstream, the SOCKS5 proxy's UDP relay. Every socket is connected: the kernel drops datagrams
 * from anyone but the server.
 */
export async function openUdpCarrier(o: CarrierOptions): Promise<Carrier> {
  const udpFailed = (err: Error): GatehopError =>
    new GatehopError(ErrorCodes.EGRESS_FAILED, `UDP ${o.host}:${o.port}: ${err.message}`, { cause: err });
  if (o.upstream) return openRelayed(o, o.upstream, udpFailed);
  const native = dataEngineStatus().engine === 'native' ? loadNative() : null;
  if (!native) return openDgram(o, o.host, o.port, null, 'udp', udpFailed);
  let address: string;
  try {
    ({ address } = await lookup(o.host, { family: 4 }));
  } catch (err) {
    throw udpFailed(err as Error);
  }
  let closed = false;
  let socket: NativeUdpCarrier;
  try {
    socket = new NativeUdpCarrier(
      native,
      address,
      o.port,
      UDP_RCVBUF,
      (datagrams) => !closed && o.sink.packets(datagrams),
      (err) => {
        if (closed) return;
        closed = true;
        socket.close();
        o.sink.failed(udpFailed(err));
      },
    );
  } catch (err) {
    if (!warnedNativeUdp)
      o.logger.warn(
        { event: 'native-udp', err: (err as Error).message },
        `batched UDP unavailable (${(err as Error).message}); using Node's dgram`,
      );
    warnedNativeUdp = true;
    return openDgram(o, address, o.port, null, 'udp', udpFailed);
  }
  return {
    kind: 'udp-native',
    framed: false,
    send: (packet) => !closed && socket.sendOne(packet),
    sendBatch: ({ data, lengths, count }: SealedBatch) => {
      if (closed) return { sent: 0, bytes: 0 };
      // What the kernel did not take (its send buffer full) is lost, as UDP loses it anyway.
      const sent = socket.send(data, lengths, count);
      let bytes = 0;
      for (let i = 0; i < sent; i++) bytes += lengths[i]!;
      return { sent, bytes };
    },
    close: () => {
      if (closed) return;
      closed = true;
      socket.close();
    },
  };
}

async function openRelayed(
  o: CarrierOptions,
  upstream: UpstreamProxy,
  udpFailed: (err: Error) => GatehopError,
): Promise<Carrier> {
  let association: { control: Socket; relay: { host: string; port: number } };
  try {
    association = await socks5UdpAssociate(upstream);
  } catch (err) {
    throw isGatehopError(err)
      ? err
      : new GatehopError(
          ErrorCodes.UPSTREAM_FAILED,
          `${o.host}:${o.port} through ${upstream.display}: ${(err as Error).message}`,
          { cause: err },
        );
  }
  const { control, relay } = association;
  const relayed = { control, header: socks5UdpHeader(o.host, o.port), port: o.port, display: upstream.display };
  try {
    return await openDgram(o, relay.host, relay.port, relayed, 'udp-upstream', udpFailed);
  } catch (err) {
    control.destroy();
    throw err;
  }
}

/** Node's dgram socket, to the server or to the SOCKS5 relay; datagrams read in one turn are handed on together. */
function openDgram(
  o: CarrierOptions,
  host: string,
  port: number,
  relayed: Relayed | null,
  kind: CarrierKind,
  udpFailed: (err: Error) => GatehopError,
): Promise<Carrier> {
  return new Promise<Carrier>((resolve, reject) => {
    const u = createSocket({ type: 'udp4', recvBufferSize: UDP_RCVBUF });
    const carrier = new DgramCarrier(u, relayed, kind, o.sink, udpFailed);
    u.once('error', (err) => {
      // A socket whose connect failed is closed here: nobody else holds it.
      carrier.close();
      reject(udpFailed(err));
    });
    u.connect(port, host, () => {
      u.removeAllListeners('error');
      carrier.listen();
      resolve(carrier);
    });
  });
}

class DgramCarrier implements Carrier {
  readonly framed = false;
  #closed = false;
  /** Datagrams read in this turn of the event loop, handed on as one batch at its end. */
  #inbox: Buffer[] = [];
  #inboxFlush: NodeJS.Immediate | null = null;

  constructor(
    private readonly u: UdpSocket,
    private readonly relayed: Relayed | null,
    readonly kind: CarrierKind,
    private readonly sink: CarrierSink,
    private readonly udpFailed: (err: Error) => GatehopError,
  ) {}

  listen(): void {
    const fail = (err: GatehopError): void => {
      if (this.#closed) return;
      this.close();
      this.sink.failed(err);
    };
    this.u.on('error', (err) => fail(this.udpFailed(err)));
    this.u.on('message', (msg) => {
      if (!this.relayed) return this.#receive(msg);
      const d = parseSocks5Udp(msg);
      // Anything else from the relay is not the server's (a malformed or foreign datagram): dropped.
      if (d && d.port === this.relayed.port) this.#receive(d.data);
      else this.sink.malformed();
    });
    this.relayed?.control.once('close', () =>
      fail(
        new GatehopError(
          ErrorCodes.UPSTREAM_FAILED,
          `the upstream proxy ${this.relayed!.display} ended the UDP association`,
        ),
      ),
    );
  }

  #receive(datagram: Buffer): void {
    this.#inbox.push(datagram);
    this.#inboxFlush ??= setImmediate(() => {
      this.#inboxFlush = null;
      const batch = this.#inbox;
      this.#inbox = [];
      if (!this.#closed) this.sink.packets(batch);
    });
  }

  send(packet: Buffer): boolean {
    if (this.#closed) return false;
    if (this.relayed) this.u.send([this.relayed.header, packet]);
    else this.u.send(packet);
    return true;
  }

  sendBatch({ data, lengths, count }: SealedBatch): { sent: number; bytes: number } {
    if (this.#closed) return { sent: 0, bytes: 0 };
    let at = 0;
    for (let i = 0; i < count; i++) {
      const len = lengths[i]!;
      this.send(data.subarray(at, at + len));
      at += len;
    }
    return { sent: count, bytes: at };
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#inboxFlush) clearImmediate(this.#inboxFlush);
    this.#inboxFlush = null;
    this.#inbox = [];
    try {
      this.u.close();
    } catch {
      /* already closed */
    }
    this.relayed?.control.destroy();
  }
}
