/**
 * The PPP client of core/sstp against a scripted server that behaves as SoftEther's PPP does
 * (Proto_PPP.c: EAP, then MS-CHAPv2, then PAP as the client Naks; LCP options it does not know
 * rejected; our IPCP request held until its own is acked). The real server is tested on the rig
 * (test/e2e/sstp-rig.test.ts); this pins each step and each refusal, with a fake clock.
 */
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../core/common/index.js';
import {
  authenticatorResponse,
  clientMppeKeys,
  Code,
  decodeCp,
  decodeFrame,
  decodeOptions,
  encodeCp,
  encodeFrame,
  encodeOptions,
  generateNtResponse,
  PppLink,
  Proto,
  type CpOption,
  type PppAuth,
  type PppAuthenticated,
  type PppUp,
} from '../../core/sstp/index.js';

const logger = createLogger({ level: 'silent', file: null });
const EAP = Buffer.from([0xc2, 0x27]);
const MSCHAPV2 = Buffer.from([0xc2, 0x23, 0x81]);
const PAP = Buffer.from([0xc0, 0x23]);
const ip = (s: string): Buffer => Buffer.from(s.split('.').map(Number));

interface ServerOptions {
  password?: string;
  /** Send a wrong S= in the Success message. */
  forgeSuccess?: boolean;
  /** Drop this many of our IPCP requests before answering. */
  dropIpcp?: number;
}

/** SoftEther's PPP, reduced to what a client meets. */
class FakeSoftEtherPpp {
  readonly sent: Array<{ protocol: number; code: number; id: number; data: Buffer }> = [];
  readonly received: Array<{ protocol: number; code: number; id: number; data: Buffer }> = [];
  link!: PppLink;
  now = 0;
  #id = 1;
  #auth: Buffer[] = [EAP, MSCHAPV2, PAP];
  #challenge = Buffer.alloc(16, 0x5a);
  #ownIpcpAcked = false;
  #heldIpcp: { id: number; data: Buffer } | null = null;
  #ipcpDrops: number;
  #naked = false;

  constructor(private readonly o: ServerOptions = {}) {
    this.#ipcpDrops = o.dropIpcp ?? 0;
  }

  send(protocol: number, code: number, id: number, data: Buffer = Buffer.alloc(0)): void {
    this.sent.push({ protocol, code, id, data });
    this.link.input(encodeFrame(protocol, encodeCp(code, id, data)), this.now);
  }

  start(): void {
    this.send(Proto.LCP, Code.CONF_REQ, this.#id++, encodeOptions([{ type: 3, value: this.#auth[0]! }]));
  }

  /** Everything the client sends comes here. */
  onFrame(frame: Buffer): void {
    const { protocol, payload } = decodeFrame(frame);
    if (protocol === Proto.IPV4) return void this.received.push({ protocol, code: -1, id: -1, data: payload });
    const p = decodeCp(payload);
    this.received.push({ protocol, ...p });
    queueMicrotask(() => this.#respond(protocol, p.code, p.id, p.data));
  }

  #respond(protocol: number, code: number, id: number, data: Buffer): void {
    if (protocol === Proto.LCP && code === Code.CONF_REQ) {
      const opts = decodeOptions(data);
      const unknown = opts.filter((o) => o.type !== 1 && o.type !== 3);
      if (unknown.length) return this.send(Proto.LCP, Code.CONF_REJ, id, encodeOptions(unknown));
      return this.send(Proto.LCP, Code.CONF_ACK, id, data);
    }
    if (protocol === Proto.LCP && code === Code.CONF_NAK) {
      // SoftEther ignores what the Nak proposes and offers its next method.
      this.#auth.shift();
      if (!this.#auth.length) return;
      return this.send(Proto.LCP, Code.CONF_REQ, this.#id++, encodeOptions([{ type: 3, value: this.#auth[0]! }]));
    }
    if (protocol === Proto.LCP && code === Code.CONF_ACK) {
      if (this.#auth[0] === MSCHAPV2)
        return this.send(
          Proto.CHAP,
          1,
          this.#id++,
          Buffer.concat([Buffer.from([16]), this.#challenge, Buffer.from('rig-node')]),
        );
      return;
    }
    if (protocol === Proto.CHAP && code === 2) {
      const peer = data.subarray(1, 17);
      const nt = data.subarray(25, 49);
      const user = data.subarray(50).toString();
      const expected = generateNtResponse(this.#challenge, peer, user, this.o.password ?? 'vpn');
      if (!nt.equals(expected))
        return this.send(Proto.CHAP, 4, id, Buffer.from(`E=691 R=0 C=${this.#challenge.toString('hex')} V=3`));
      const s = this.o.forgeSuccess
        ? Buffer.alloc(20)
        : authenticatorResponse(this.o.password ?? 'vpn', nt, peer, this.#challenge, user);
      this.send(Proto.CHAP, 3, id, Buffer.from(`S=${s.toString('hex').toUpperCase()}`));
      return this.#afterAuth();
    }
    if (protocol === Proto.PAP && code === 1) {
      const ulen = data[0]!;
      const pass = data.subarray(2 + ulen, 2 + ulen + data[1 + ulen]!).toString();
      if (pass !== (this.o.password ?? 'vpn'))
        return this.send(Proto.PAP, 3, id, Buffer.from([5, ...Buffer.from('nope!')]));
      this.send(Proto.PAP, 2, id, Buffer.from([0]));
      return this.#afterAuth();
    }
    if (protocol === Proto.IPCP && code === Code.CONF_ACK) {
      this.#ownIpcpAcked = true;
      const held = this.#heldIpcp;
      this.#heldIpcp = null;
      if (held) this.#respond(Proto.IPCP, Code.CONF_REQ, held.id, held.data);
      return;
    }
    if (protocol === Proto.IPCP && code === Code.CONF_REQ) {
      if (this.#ipcpDrops > 0) return void this.#ipcpDrops--;
      if (!this.#ownIpcpAcked) return void (this.#heldIpcp = { id, data });
      const opts = decodeOptions(data);
      const want: CpOption[] = [
        { type: 3, value: ip('10.211.0.10') },
        { type: 129, value: ip('10.211.254.254') },
        { type: 131, value: ip('10.211.254.253') },
      ];
      const matches = want.every((w) => opts.some((o) => o.type === w.type && o.value.equals(w.value)));
      if (!matches && !this.#naked) {
        this.#naked = true;
        return this.send(Proto.IPCP, Code.CONF_NAK, id, encodeOptions(want));
      }
      return this.send(Proto.IPCP, Code.CONF_ACK, id, data);
    }
  }

  #afterAuth(): void {
    this.send(Proto.IPCP, Code.CONF_REQ, this.#id++, encodeOptions([{ type: 3, value: ip('10.211.254.254') }]));
  }
}

async function run(o: { auth?: PppAuth[]; password?: string; server?: ServerOptions } = {}) {
  const server = new FakeSoftEtherPpp(o.server);
  const events: { authenticated?: PppAuthenticated; up?: PppUp; down?: Error } = {};
  const link = new PppLink({
    username: 'vpn',
    password: o.password ?? 'vpn',
    auth: o.auth ?? ['mschapv2', 'pap'],
    send: (f) => server.onFrame(f),
    logger,
    random: (n) => Buffer.alloc(n, 0x11),
  });
  server.link = link;
  link.on('authenticated', (a) => (events.authenticated = a));
  link.on('up', (u) => (events.up = u));
  link.on('down', (e) => (events.down = e));
  link.start(0);
  server.start();
  for (let i = 0; i < 20 && !events.up && !events.down; i++) await new Promise((r) => setImmediate(r));
  return { server, link, events };
}

describe('PPP against SoftEther-like negotiation', () => {
  it('Naks EAP, authenticates with MS-CHAPv2, drops the rejected magic number, and comes up with the address and DNS IPCP gave', async () => {
    const { server, link, events } = await run();
    expect(events.down).toBeUndefined();
    expect(events.up).toEqual({
      address: '10.211.0.10',
      peerAddress: '10.211.254.254',
      dns: ['10.211.254.254', '10.211.254.253'],
      mtu: 1500,
      auth: 'mschapv2',
    });
    expect(link.phase).toBe('open');
    // The Nak named MS-CHAPv2; the magic number went after the Reject.
    const nak = server.received.find((r) => r.protocol === Proto.LCP && r.code === Code.CONF_NAK)!;
    expect(decodeOptions(nak.data)).toEqual([{ type: 3, value: MSCHAPV2 }]);
    const ourRequests = server.received
      .filter((r) => r.protocol === Proto.LCP && r.code === Code.CONF_REQ)
      .map((r) => decodeOptions(r.data).map((x) => x.type));
    expect(ourRequests).toEqual([[1, 5], [1]]);
    // The keys the crypto binding needs: the client's MPPE keys from this NT-Response.
    const response = server.received.find((r) => r.protocol === Proto.CHAP && r.code === 2)!;
    expect(events.authenticated).toEqual({
      auth: 'mschapv2',
      keys: clientMppeKeys('vpn', response.data.subarray(25, 49)),
    });
    // IPv4 in and out.
    const got: Buffer[] = [];
    link.on('packet', (p) => got.push(p));
    link.input(encodeFrame(Proto.IPV4, Buffer.from([0x45, 1, 2])), 1);
    expect(got).toEqual([Buffer.from([0x45, 1, 2])]);
    link.writeIp(Buffer.from([0x45, 9]));
    expect(server.received.at(-1)).toMatchObject({ protocol: Proto.IPV4, data: Buffer.from([0x45, 9]) });
  });

  it('a client that takes only PAP is moved there by Naking EAP and MS-CHAPv2; no keys then', async () => {
    const { events, server } = await run({ auth: ['pap'] });
    expect(events.up?.auth).toBe('pap');
    expect(events.authenticated).toEqual({ auth: 'pap', keys: null });
    expect(server.received.filter((r) => r.protocol === Proto.LCP && r.code === Code.CONF_NAK)).toHaveLength(2);
  });

  it('a refused password is GH_ERR_SSTP_AUTH_FAILED naming why (MS-CHAPv2 E=691, PAP Nak)', async () => {
    const chap = await run({ password: 'wrong' });
    expect(chap.events.down).toMatchObject({
      code: 'GH_ERR_SSTP_AUTH_FAILED',
      message: expect.stringMatching(/user name or password was refused/),
    });
    const pap = await run({ password: 'wrong', auth: ['pap'] });
    expect(pap.events.down).toMatchObject({ code: 'GH_ERR_SSTP_AUTH_FAILED', message: 'PAP refused: nope!' });
  });

  it('a server whose Success does not prove it knows the password is refused', async () => {
    const { events } = await run({ server: { forgeSuccess: true } });
    expect(events.down).toMatchObject({
      code: 'GH_ERR_SSTP_AUTH_FAILED',
      message: expect.stringMatching(/does not prove/),
    });
    expect(events.up).toBeUndefined();
  });

  it('retransmits an unanswered IPCP request with the same Identifier and bytes', async () => {
    const { server, link, events } = await run({ server: { dropIpcp: 1 } });
    expect(events.up).toBeUndefined();
    const first = server.received.filter((r) => r.protocol === Proto.IPCP && r.code === Code.CONF_REQ);
    expect(first).toHaveLength(1);
    link.tick(3_000);
    for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
    const all = server.received.filter((r) => r.protocol === Proto.IPCP && r.code === Code.CONF_REQ);
    expect(all[1]).toEqual(all[0]);
    expect(events.up?.address).toBe('10.211.0.10');
  });

  it('once up: answers LCP echoes, sends its own when the server is quiet, rejects IPv6CP and CCP, and ends on Terminate-Request', async () => {
    const { server, link, events } = await run();
    server.send(Proto.LCP, Code.ECHO_REQ, 77, Buffer.from([1, 2, 3, 4, 9]));
    const reply = server.received.at(-1)!;
    expect(reply).toMatchObject({ protocol: Proto.LCP, code: Code.ECHO_REPLY, id: 77 });
    expect(reply.data.subarray(4)).toEqual(Buffer.from([9]));
    link.tick(10_000);
    expect(server.received.at(-1)).toMatchObject({ protocol: Proto.LCP, code: Code.ECHO_REQ });
    for (const proto of [Proto.IPV6CP, Proto.CCP]) {
      server.send(proto, Code.CONF_REQ, 5, Buffer.alloc(0));
      const rej = server.received.at(-1)!;
      expect(rej).toMatchObject({ protocol: Proto.LCP, code: Code.PROTO_REJ });
      expect(rej.data.readUInt16BE(0)).toBe(proto);
    }
    server.send(Proto.LCP, Code.TERM_REQ, 9);
    expect(server.received.at(-1)).toMatchObject({ protocol: Proto.LCP, code: Code.TERM_ACK, id: 9 });
    expect(events.down).toMatchObject({
      code: 'GH_ERR_SSTP_REFUSED',
      message: expect.stringMatching(/ended the PPP link/),
    });
  });

  it('gives up with GH_ERR_SSTP_PROTOCOL when LCP gets no answer, and garbage never throws', () => {
    const sent: Buffer[] = [];
    const link = new PppLink({
      username: 'vpn',
      password: 'vpn',
      auth: ['mschapv2'],
      send: (f) => sent.push(f),
      logger,
    });
    let down: Error | null = null;
    link.on('down', (e) => (down = e));
    link.input(Buffer.from([0xff, 0x03, 0xc0, 0x21, 1, 1, 0, 99]), 0); // a lying length: a coded failure, not a throw
    expect(down).toMatchObject({ code: 'GH_ERR_SSTP_PROTOCOL' });
    const quiet = new PppLink({
      username: 'vpn',
      password: 'vpn',
      auth: ['mschapv2'],
      send: (f) => sent.push(f),
      logger,
    });
    let gone: Error | null = null;
    quiet.on('down', (e) => (gone = e));
    quiet.start(0);
    for (let t = 3_000; t <= 40_000; t += 3_000) quiet.tick(t);
    expect(gone).toMatchObject({ code: 'GH_ERR_SSTP_PROTOCOL', message: 'LCP: no answer after 10 tries' });
  });
});
