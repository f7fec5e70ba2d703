import type { Logger } from '../common/index.js';
import { Stack, type TcpStream } from '../netstack/index.js';
import type { CaptureInbound, CapturedUdp } from '../contracts/index.js';
import { answerQuery } from './dns-answer.js';
import { FakeIps } from './fake-ips.js';
import {
  buildUdp,
  echoReply,
  parseIpv4,
  parseUdp,
  PROTO_ICMP,
  PROTO_TCP,
  PROTO_UDP,
  ipv6Refusal,
  tcpRefusal,
  tcpSyn,
  unreachable,
  type Ipv4Header,
} from './ipv4-packet.js';

/** A program's UDP flows at once (one per its socket and peer); the least recently used goes past it. */
const MAX_UDP_FLOWS = 1024;
/** A UDP flow with no packet either way this long is closed (a new packet opens it again). */
const UDP_IDLE_MS = 60_000;
/** Packets held per flow while its egress side opens; more are dropped (UDP may drop). */
const MAX_HELD = 16;

export interface GatewayStats {
  tcpAccepted: number;
  udpFlows: number;
  dnsAnswered: number;
  icmpAnswered: number;
  refused: number;
  dropped: number;
}

interface UdpFlow {
  relay: CapturedUdp;
  /** What the program sent to (a fake address stays the reply's source). */
  dst: string;
  dstPort: number;
  src: string;
  srcPort: number;
  host: string;
  type: 'ipv4' | 'domain';
  held: Buffer[] | null;
  timer: NodeJS.Timeout;
}

/**
 * The far end of a captured program's network (`gatehop run`): every IPv4 packet its TUN sends
 * comes here. TCP goes into a gateway build of lwIP (every address is its own), and each connection
 * it accepts becomes a proxy session for the address and port the program dialled, or for the name
 * behind a fake address; UDP is relayed per flow through the same rules; names are answered here
 * (dns-answer.ts); ICMP echo is answered for the gateway's own addresses and refused (unreachable)
 * elsewhere, as is what cannot be carried, so nothing waits on a black hole.
 */
export class Gateway {
  readonly stats: GatewayStats = {
    tcpAccepted: 0,
    udpFlows: 0,
    dnsAnswered: 0,
    icmpAnswered: 0,
    refused: 0,
    dropped: 0,
  };
  readonly #stack: Stack;
  readonly #fake = new FakeIps();
  readonly #udp = new Map<string, UdpFlow>();
  #closed = false;

  constructor(
    private readonly o: {
      inbound: CaptureInbound;
      /** The gateway's address in the program's namespace (its resolver and default route). */
      address: string;
      /** The TUN's MTU (the program's kernel sends packets up to it). */
      mtu: number;
      output: (packet: Buffer) => void;
      log: Logger;
      /**
       * Answer every DNS query (UDP port 53, any server) here, not only those sent to the gateway:
       * TUN mode, where programs ask whatever server the system names.
       */
      hijackDns?: boolean;
    },
  ) {
    this.#stack = new Stack({ address: o.address, netmask: 30, mtu: o.mtu, captureGateway: true, output: o.output });
    this.#stack.listenTcp(1, (s) => this.#accepted(s));
  }

  /** One IPv4 packet from the program. */
  input(p: Buffer): void {
    if (this.#closed) return;
    if (p.length > 0 && p[0]! >> 4 === 6) {
      const refusal = ipv6Refusal(p);
      this.stats.refused++;
      if (refusal) this.o.output(refusal);
      return;
    }
    const h = parseIpv4(p);
    if (!h || h.fragment || isMulticastOrBroadcast(h.dst)) {
      this.stats.dropped++;
      return;
    }
    if (h.protocol === PROTO_TCP) {
      // Where no flow can go (the gateway itself, a fake address no name holds), the SYN is refused
      // here, so the program sees "connection refused" rather than a connection that resets.
      const syn = tcpSyn(p, h);
      if (syn && (h.dst === this.o.address || (FakeIps.inRange(h.dst) && this.#fake.nameOf(h.dst) === null))) {
        this.stats.refused++;
        this.o.output(tcpRefusal(h, syn));
        return;
      }
      this.#stack.input(h.totalLength === p.length ? p : p.subarray(0, h.totalLength));
      return;
    }
    if (h.protocol === PROTO_UDP) return this.#udpIn(p, h);
    if (h.protocol === PROTO_ICMP) return this.#icmpIn(p, h);
    this.#refuse(p, h, 2); // protocol unreachable
  }

  #accepted(s: TcpStream): void {
    this.stats.tcpAccepted++;
    const dst = s.localAddress;
    const port = s.localPort;
    const name = FakeIps.inRange(dst) ? this.#fake.nameOf(dst) : null;
    if (dst === this.o.address || (FakeIps.inRange(dst) && name === null)) {
      // Refused at the SYN (input); a name given away since then ends its connection here.
      s.destroy();
      this.stats.refused++;
      return;
    }
    this.o.inbound.adoptCaptured(s, { host: name ?? dst, port, byName: name !== null });
  }

  #udpIn(p: Buffer, h: Ipv4Header): void {
    const u = parseUdp(p, h);
    if (!u) {
      this.stats.dropped++;
      return;
    }
    if (u.dstPort === 53 && this.o.hijackDns) return this.#answer(h, u.srcPort, u.payload);
    if (h.dst === this.o.address) {
      if (u.dstPort !== 53) return this.#refuse(p, h, 3); // port unreachable
      return this.#answer(h, u.srcPort, u.payload);
    }
    const name = FakeIps.inRange(h.dst) ? this.#fake.nameOf(h.dst) : null;
    if (FakeIps.inRange(h.dst) && name === null) return this.#refuse(p, h, 1); // host unreachable
    const key = `${u.srcPort}>${h.dst}:${u.dstPort}`;
    let flow = this.#udp.get(key);
    if (flow) {
      // The most recently used last (the first is the one to close at the limit).
      this.#udp.delete(key);
      this.#udp.set(key, flow);
      flow.timer.refresh();
    } else {
      flow = this.#openFlow(key, h, u.srcPort, u.dstPort, name);
    }
    const payload = Buffer.from(u.payload);
    if (flow.held) {
      if (flow.held.length < MAX_HELD) flow.held.push(payload);
      else this.stats.dropped++;
      return;
    }
    flow.relay.send(payload, flow.host, flow.dstPort, flow.type);
  }

  /** A DNS query answered here, from the server it was sent to. */
  #answer(h: Ipv4Header, srcPort: number, query: Buffer): void {
    const answer = answerQuery(query, this.#fake);
    if (!answer) {
      this.stats.dropped++;
      return;
    }
    this.stats.dnsAnswered++;
    this.o.output(buildUdp(h.dst, 53, h.src, srcPort, answer));
  }

  #openFlow(key: string, h: Ipv4Header, srcPort: number, dstPort: number, name: string | null): UdpFlow {
    if (this.#udp.size >= MAX_UDP_FLOWS) {
      const [oldest] = this.#udp.keys();
      this.#closeFlow(oldest!);
    }
    this.stats.udpFlows++;
    const relay = this.o.inbound.captureUdp({
      src: { ip: h.src, port: srcPort },
      onReply: (d) => {
        const f = this.#udp.get(key);
        if (!f || this.#closed) return;
        f.timer.refresh();
        // Whoever answered, the program hears it from where it sent (a connected socket's view).
        this.o.output(buildUdp(f.dst, f.dstPort, f.src, f.srcPort, d.data));
      },
      onError: (err) => {
        this.o.log.debug({ event: 'capture-udp-error', flow: key, err: err.message }, 'captured UDP flow failed');
        this.#closeFlow(key);
      },
    });
    const timer = setTimeout(() => this.#closeFlow(key), UDP_IDLE_MS);
    timer.unref();
    const flow: UdpFlow = {
      relay,
      dst: h.dst,
      dstPort,
      src: h.src,
      srcPort,
      host: name ?? h.dst,
      type: name ? 'domain' : 'ipv4',
      held: [],
      timer,
    };
    this.#udp.set(key, flow);
    relay.open().then(
      () => {
        const held = flow.held ?? [];
        flow.held = null;
        if (this.#udp.get(key) !== flow) return;
        for (const payload of held) relay.send(payload, flow.host, flow.dstPort, flow.type);
      },
      (err: Error) => {
        this.o.log.debug(
          { event: 'capture-udp-open-failed', flow: key, err: err.message },
          'captured UDP flow could not open',
        );
        this.#closeFlow(key);
      },
    );
    return flow;
  }

  #closeFlow(key: string): void {
    const flow = this.#udp.get(key);
    if (!flow) return;
    this.#udp.delete(key);
    clearTimeout(flow.timer);
    flow.relay.close();
  }

  #icmpIn(p: Buffer, h: Ipv4Header): void {
    if (h.dst === this.o.address || (FakeIps.inRange(h.dst) && this.#fake.nameOf(h.dst) !== null)) {
      const reply = echoReply(p, h);
      if (reply) {
        this.stats.icmpAnswered++;
        this.o.output(reply);
      }
      return;
    }
    // Echo cannot be carried through a proxy's flows: said at once ("Packet filtered"), not left to time out.
    if (p[h.ihl] === 8) this.#refuse(p, h, 13);
  }

  #refuse(p: Buffer, h: Ipv4Header, code: number): void {
    this.stats.refused++;
    this.o.output(unreachable(p, h, this.o.address, code));
  }

  get udpFlows(): number {
    return this.#udp.size;
  }

  get connections(): number {
    return this.#stack.closed ? 0 : this.#stack.stats.connections;
  }

  /** Resets every connection and closes every flow. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const key of [...this.#udp.keys()]) this.#closeFlow(key);
    this.#stack.close();
  }
}

function isMulticastOrBroadcast(ip: string): boolean {
  const first = Number(ip.slice(0, ip.indexOf('.')));
  return (first >= 224 && first <= 239) || ip === '255.255.255.255';
}
