import { once } from 'node:events';
import { Duplex } from 'node:stream';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { answerQuery, FakeIps, Gateway } from '../../core/capture/index.js';
import type { CaptureInbound, CapturedUdp } from '../../core/contracts/index.js';
import { Stack, type StackDatagram } from '../../core/netstack/index.js';
import type { ClientConnection } from '../../core/contracts/index.js';
import type { UdpDatagram } from '../../core/contracts/index.js';
import { eventually } from '../helpers/fds.js';

/** A DNS query for `name` of `type` (id 0x1234, RD set). */
function query(name: string, type: number): Buffer {
  const labels = name.split('.').map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l)]));
  const tail = Buffer.alloc(4);
  tail.writeUInt16BE(type, 0);
  tail.writeUInt16BE(1, 2);
  return Buffer.concat([
    Buffer.from([0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]),
    ...labels,
    Buffer.from([0]),
    tail,
  ]);
}

const rcode = (answer: Buffer): number => answer[3]! & 0x0f;
const answers = (answer: Buffer): number => answer.readUInt16BE(6);
/** The A record's address of an answer whose one answer is an A record. */
const aRecord = (answer: Buffer): string => [...answer.subarray(answer.length - 4)].join('.');

describe('the capture gateway answers names itself, from fake addresses', () => {
  it('gives each name its own address from 198.18.0.0/15, the same one each time, and names it back (PTR)', () => {
    const fake = new FakeIps();
    const a = answerQuery(query('files.test', 1), fake)!;
    expect(a.readUInt16BE(0)).toBe(0x1234);
    expect(a[2]! & 0x80).toBe(0x80); // a response
    expect(rcode(a)).toBe(0);
    expect(answers(a)).toBe(1);
    expect(aRecord(a)).toBe('198.18.0.4');
    expect(aRecord(answerQuery(query('other.test', 1), fake)!)).toBe('198.18.0.5');
    expect(aRecord(answerQuery(query('FILES.test', 1), fake)!)).toBe('198.18.0.4');
    expect(fake.nameOf('198.18.0.4')).toBe('files.test');
    const ptr = answerQuery(query('4.0.18.198.in-addr.arpa', 12), fake)!;
    expect(answers(ptr)).toBe(1);
    expect(ptr.includes(Buffer.from('files'))).toBe(true);
  });

  it('answers AAAA and HTTPS with nothing (IPv6 is not carried), other types as not implemented, and malformed queries with FORMERR or not at all', () => {
    const fake = new FakeIps();
    for (const type of [28, 65]) {
      const a = answerQuery(query('files.test', type), fake)!;
      expect([rcode(a), answers(a)]).toEqual([0, 0]);
    }
    expect(rcode(answerQuery(query('files.test', 16), fake)!)).toBe(4); // TXT
    expect(rcode(answerQuery(query('files.test', 1).subarray(0, 20), fake)!)).toBe(1);
    const response = query('files.test', 1);
    response[2]! |= 0x80;
    expect(answerQuery(response, fake)).toBeNull();
    expect(answerQuery(Buffer.alloc(5), fake)).toBeNull();
    expect(fake.size).toBe(0); // no malformed query took an address
  });

  it('answers localhost names with the program’s own loopback, never a fake address to this machine’s services (#59)', () => {
    const fake = new FakeIps();
    for (const name of ['localhost', 'LOCALHOST', 'db.localhost'])
      expect(aRecord(answerQuery(query(name, 1), fake)!)).toBe('127.0.0.1');
    expect(fake.size).toBe(0);
    expect(aRecord(answerQuery(query('localhost.example', 1), fake)!)).toBe('198.18.0.4');
  });

  it('past its size the pool gives the oldest name’s address to the next name', async () => {
    const { MAX_NAMES } = await import('../../core/capture/fake-ips.js');
    const fake = new FakeIps();
    const first = fake.addressFor('n0.test');
    for (let i = 1; i < MAX_NAMES; i++) fake.addressFor(`n${i}.test`);
    expect(fake.nameOf(first)).toBe('n0.test');
    fake.addressFor('n1.test'); // used again: no longer the oldest after n0
    fake.addressFor('late.test');
    expect(fake.nameOf(first)).toBeNull();
    expect(fake.nameOf(fake.addressFor('n1.test'))).toBe('n1.test');
    expect(fake.size).toBe(MAX_NAMES);
  });
});

/** What the gateway handed over: each TCP flow (echoed back) and each UDP flow's packets (echoed too). */
function fakeInbound(): CaptureInbound & {
  tcp: Array<{ host: string; port: number; byName: boolean }>;
  udp: Array<{ host: string; port: number; type: string; data: string }>;
} {
  const tcp: Array<{ host: string; port: number; byName: boolean }> = [];
  const udp: Array<{ host: string; port: number; type: string; data: string }> = [];
  return {
    tcp,
    udp,
    adoptCaptured(stream: ClientConnection, target) {
      tcp.push(target);
      stream.on('error', () => {});
      (stream as Duplex).pipe(stream as Duplex);
    },
    captureUdp(o): CapturedUdp {
      return {
        open: () => Promise.resolve(),
        send(payload, host, port, type) {
          udp.push({ host, port, type, data: payload.toString() });
          const d: UdpDatagram = { data: Buffer.from(`re:${payload.toString()}`), address: '192.0.2.99', port: 1 };
          setImmediate(() => o.onReply(d));
        },
        close() {},
      };
    },
  };
}

describe('the capture gateway between a program’s stack and the proxy', () => {
  let program: Stack | null = null;
  let gateway: Gateway | null = null;
  afterEach(() => {
    program?.close();
    gateway?.close();
    program = gateway = null;
  });

  /** A program's network (an lwIP client stack at the TUN's address) wired to a gateway, packets crossing on setImmediate as a link would. */
  function wire(inbound: CaptureInbound): { program: Stack; gateway: Gateway } {
    const toGateway: Buffer[] = [];
    const toProgram: Buffer[] = [];
    let scheduled = false;
    const flush = (): void => {
      if (scheduled) return;
      scheduled = true;
      setImmediate(() => {
        scheduled = false;
        for (const p of toGateway.splice(0)) gateway?.input(p);
        for (const p of toProgram.splice(0)) if (program && !program.closed) program.input(p);
      });
    };
    program = new Stack({
      address: '172.23.255.1',
      netmask: 30,
      gateway: '172.23.255.2',
      mtu: 1500,
      output: (p) => {
        toGateway.push(p);
        flush();
      },
    });
    gateway = new Gateway({
      inbound,
      address: '172.23.255.2',
      mtu: 1500,
      log: pino({ level: 'silent' }),
      output: (p) => {
        toProgram.push(p);
        flush();
      },
    });
    return { program, gateway };
  }

  it('a name looked up at the gateway reaches the proxy as that name; an address as the address; bytes flow both ways', async () => {
    const inbound = fakeInbound();
    const { program: p } = wire(inbound);
    const dns = p.openUdp();
    const got = once(dns, 'message') as Promise<[StackDatagram]>;
    dns.send(query('files.test', 1), '172.23.255.2', 53);
    const [reply] = await got;
    expect(reply.address).toBe('172.23.255.2');
    const fakeAddress = aRecord(reply.data);
    expect(fakeAddress).toBe('198.18.0.4');
    const byName = await p.connectTcp(fakeAddress, 80);
    const byAddress = await p.connectTcp('203.0.113.7', 8443);
    await eventually(() => inbound.tcp.length === 2, 2_000, 'both flows handed over');
    expect(inbound.tcp).toEqual([
      { host: 'files.test', port: 80, byName: true },
      { host: '203.0.113.7', port: 8443, byName: false },
    ]);
    const echoed = once(byName, 'data');
    byName.write('hello');
    expect(String((await echoed)[0])).toBe('hello');
    byName.destroy();
    byAddress.destroy();
  });

  it('UDP goes per flow to the proxy by name or address, and replies come back from where the program sent', async () => {
    const inbound = fakeInbound();
    const { program: p } = wire(inbound);
    const dns = p.openUdp();
    const answered = once(dns, 'message') as Promise<[StackDatagram]>;
    dns.send(query('echo.test', 1), '172.23.255.2', 53);
    const fakeAddress = aRecord((await answered)[0].data);
    const sock = p.openUdp();
    const replies: StackDatagram[] = [];
    sock.on('message', (d) => replies.push(d));
    sock.send(Buffer.from('one'), fakeAddress, 7);
    sock.send(Buffer.from('two'), '203.0.113.5', 7);
    await eventually(() => replies.length === 2, 2_000, 'both replies');
    expect(inbound.udp).toEqual([
      { host: 'echo.test', port: 7, type: 'domain', data: 'one' },
      { host: '203.0.113.5', port: 7, type: 'ipv4', data: 'two' },
    ]);
    expect(replies.map((r) => `${r.address}:${r.port} ${r.data.toString()}`).sort()).toEqual([
      `${fakeAddress}:7 re:one`,
      '203.0.113.5:7 re:two',
    ]);
  });

  it('answers ping to itself; refuses at once what it cannot carry: ping elsewhere, UDP to its own other ports, TCP to itself, a fake address no name holds', async () => {
    const inbound = fakeInbound();
    const { program: p, gateway: g } = wire(inbound);
    expect(await p.ping('172.23.255.2', { timeoutMs: 2_000 })).toBeGreaterThanOrEqual(0);
    expect(g.stats.icmpAnswered).toBe(1);
    await expect(p.ping('203.0.113.9', { timeoutMs: 300 })).rejects.toThrow();
    p.openUdp().send(Buffer.from('x'), '172.23.255.2', 9);
    await expect(p.connectTcp('172.23.255.2', 22, { timeoutMs: 2_000 })).rejects.toThrow();
    await expect(p.connectTcp('198.19.0.200', 80, { timeoutMs: 2_000 })).rejects.toThrow();
    await eventually(() => g.stats.refused >= 4, 2_000, 'four refusals');
    expect(inbound.tcp).toEqual([]);
  });

  it('refuses IPv6 at once with ICMPv6 "administratively prohibited" from the address it was sent to, checksum and all', () => {
    const out: Buffer[] = [];
    gateway = new Gateway({
      inbound: fakeInbound(),
      address: '172.23.254.2',
      mtu: 1500,
      log: pino({ level: 'silent' }),
      output: (p) => out.push(p),
    });
    // A TCP SYN from 2001:db8::1 to 2001:db8::2 port 443 (payload past the header is not looked at).
    const syn = Buffer.alloc(60);
    syn[0] = 0x60;
    syn.writeUInt16BE(20, 4);
    syn[6] = 6;
    syn[7] = 64;
    Buffer.from('20010db8000000000000000000000001', 'hex').copy(syn, 8);
    Buffer.from('20010db8000000000000000000000002', 'hex').copy(syn, 24);
    gateway.input(syn);
    expect(out).toHaveLength(1);
    const r = out[0]!;
    expect([r[0]! >> 4, r[6], r[40], r[41]]).toEqual([6, 58, 1, 1]);
    expect(r.subarray(8, 24).toString('hex')).toBe('20010db8000000000000000000000002');
    expect(r.subarray(24, 40).toString('hex')).toBe('20010db8000000000000000000000001');
    expect(r.subarray(48).equals(syn)).toBe(true);
    // The ICMPv6 checksum (RFC 4443 over the pseudo-header) adds up to 0xffff.
    let sum = 0;
    for (let i = 8; i < 40; i += 2) sum += r.readUInt16BE(i);
    sum += r.length - 40 + 58;
    for (let i = 40; i < r.length; i += 2) sum += r.readUInt16BE(i);
    while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
    expect(sum).toBe(0xffff);
    // An ICMPv6 error is never answered (no storms between two refusers).
    gateway.input(r);
    expect(out).toHaveLength(1);
  });
});
