import { EventEmitter } from 'node:events';
import * as dnsPacket from 'dns-packet';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DnsResolver, type UdpOpener } from '../../core/netstack/index.js';

type Behaviour = { delayMs: number; answer: 'ok' | 'nxdomain' | 'servfail' } | 'silent';

/**
 * A fake tunnel path for unit tests: each "server" answers (or not) after its own delay. The
 * kernel test (test/netstack/kernel.test.ts) resolves through the real stack against dnsmasq.
 */
function fakePath(servers: Record<string, Behaviour>): UdpOpener & { asked: Array<{ server: string; at: number }> } {
  const asked: Array<{ server: string; at: number }> = [];
  const start = Date.now();
  return {
    asked,
    openUdp() {
      const sock = new EventEmitter() as EventEmitter & {
        send(d: Buffer, ip: string, port: number): boolean;
        close(): void;
      };
      let open = true;
      sock.send = (data, ip) => {
        asked.push({ server: ip, at: Date.now() - start });
        const b = servers[ip];
        if (!b || b === 'silent') return true;
        const q = dnsPacket.decode(data);
        const question = q.questions![0]!;
        const rcode = b.answer === 'nxdomain' ? 3 : b.answer === 'servfail' ? 2 : 0;
        const answers =
          b.answer === 'ok' && question.type === 'A'
            ? [{ type: 'A' as const, name: question.name, ttl: 60, data: '10.9.9.9' }]
            : [];
        const reply = dnsPacket.encode({
          type: 'response',
          id: q.id,
          flags: dnsPacket.RECURSION_DESIRED | rcode,
          questions: [question],
          answers,
        });
        setTimeout(() => open && sock.emit('message', { data: reply, address: ip, port: 53 }), b.delayMs);
        return true;
      };
      sock.close = () => {
        open = false;
      };
      return sock as unknown as ReturnType<UdpOpener['openUdp']>;
    },
  };
}

describe('DNS resolver through a tunnel', () => {
  afterEach(() => vi.useRealTimers());

  it('takes an answer that comes after the first retransmission (a busy tunnel delays it, it is not lost)', async () => {
    vi.useFakeTimers();
    const path = fakePath({ '10.0.0.1': { delayMs: 2_500, answer: 'ok' } });
    const dns = new DnsResolver(path, { servers: ['10.0.0.1'] });
    const result = dns.resolve('files.test');
    await vi.advanceTimersByTimeAsync(2_600);
    await expect(result).resolves.toEqual(['10.9.9.9']);
  });

  it('asks the pushed server again at 1, 3 and 7 s and a fallback from the second round; the fallback answers', async () => {
    vi.useFakeTimers();
    const path = fakePath({ '10.0.0.1': 'silent', '1.1.1.1': { delayMs: 50, answer: 'ok' } });
    const dns = new DnsResolver(path, { servers: ['10.0.0.1'], fallback: ['1.1.1.1', '8.8.8.8'] });
    const result = dns.resolve('files.test');
    await vi.advanceTimersByTimeAsync(1_100);
    await expect(result).resolves.toEqual(['10.9.9.9']);
    expect(path.asked.map((a) => `${a.server}@${a.at}`)).toEqual([
      '10.0.0.1@0',
      '10.0.0.1@0',
      '10.0.0.1@1000',
      '10.0.0.1@1000',
      '1.1.1.1@1000',
      '1.1.1.1@1000',
    ]);
  });

  it('no such host from the server is final at once, and cached', async () => {
    const path = fakePath({ '10.0.0.1': { delayMs: 5, answer: 'nxdomain' } });
    const dns = new DnsResolver(path, { servers: ['10.0.0.1'] });
    await expect(dns.resolve('nowhere.test')).rejects.toMatchObject({ code: 'GH_ERR_EGRESS_DNS_NOT_FOUND' });
    await expect(dns.resolve('nowhere.test')).rejects.toThrow(/cached/);
    expect(path.asked).toHaveLength(2);
  });

  it('fails at the deadline naming the silent servers and the SERVFAIL ones; a SERVFAIL server is not asked again', async () => {
    vi.useFakeTimers();
    const path = fakePath({ '10.0.0.1': { delayMs: 5, answer: 'servfail' }, '1.1.1.1': 'silent' });
    const dns = new DnsResolver(path, { servers: ['10.0.0.1'], fallback: ['1.1.1.1'], lookupTimeoutMs: 5_000 });
    const result = dns.resolve('files.test');
    const failed = expect(result).rejects.toThrow(
      /no answer from 1\.1\.1\.1 within 5000 ms; 10\.0\.0\.1 answered SERVFAIL/,
    );
    await vi.advanceTimersByTimeAsync(5_000);
    await failed;
    expect(path.asked.filter((a) => a.server === '10.0.0.1')).toHaveLength(2);
    expect(dns.stats.failures).toBe(1);
  });

  it('ignores answers from an address it did not ask and ids it did not send', async () => {
    vi.useFakeTimers();
    const path = fakePath({ '10.0.0.1': 'silent' });
    const dns = new DnsResolver(path, { servers: ['10.0.0.1'], lookupTimeoutMs: 2_000 });
    const spoofer = path.openUdp; // every socket the resolver opens gets a forged answer
    let socket: EventEmitter | null = null;
    path.openUdp = () =>
      (socket = spoofer.call(path) as unknown as EventEmitter) as unknown as ReturnType<UdpOpener['openUdp']>;
    const result = dns.resolve('files.test');
    const forged = dnsPacket.encode({
      type: 'response',
      id: 1,
      questions: [{ type: 'A', name: 'files.test' }],
      answers: [{ type: 'A', name: 'files.test', ttl: 60, data: '6.6.6.6' }],
    });
    for (let id = 0; id < 0x10000; id += 4099)
      socket!.emit('message', {
        data: dnsPacket.encode({ ...dnsPacket.decode(forged), id }),
        address: '10.0.0.2',
        port: 53,
      });
    socket!.emit('message', { data: Buffer.from('garbage'), address: '10.0.0.1', port: 53 });
    const failed = expect(result).rejects.toMatchObject({ code: 'GH_ERR_DNS_TIMEOUT' });
    await vi.advanceTimersByTimeAsync(2_000);
    await failed;
  });
});
