import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { socks5Codec as c } from '../../core/proxy/index.js';

describe('SOCKS5 codec', () => {
  it('parses a greeting and says how much it consumed', () => {
    const r = c.parseGreeting(Buffer.from([5, 2, 0, 2, 0xaa]));
    expect(r).toEqual({ kind: 'ok', value: { methods: [0, 2] }, consumed: 4 });
  });

  it('asks for more bytes on a truncated greeting', () => {
    expect(c.parseGreeting(Buffer.from([5])).kind).toBe('incomplete');
    expect(c.parseGreeting(Buffer.from([5, 3, 0])).kind).toBe('incomplete');
  });

  it('calls a method list of length 0 malformed', () => {
    expect(c.parseGreeting(Buffer.from([5, 0]))).toMatchObject({ kind: 'malformed', reason: 'no-methods' });
  });

  it('rejects a wrong version', () => {
    expect(c.parseGreeting(Buffer.from([4, 1, 0]))).toMatchObject({ kind: 'malformed', reason: 'bad-version' });
  });

  it('parses RFC 1929 username/password', () => {
    const buf = Buffer.from([1, 3, ...Buffer.from('bob'), 4, ...Buffer.from('pa:s')]);
    expect(c.parseUserPass(buf)).toEqual({
      kind: 'ok',
      value: { username: 'bob', password: 'pa:s' },
      consumed: buf.length,
    });
    expect(c.parseUserPass(buf.subarray(0, 6)).kind).toBe('incomplete');
  });

  it('parses CONNECT to IPv4, IPv6 and domain targets', () => {
    const v4 = c.parseRequest(Buffer.from([5, 1, 0, 1, 10, 0, 0, 1, 0x01, 0xbb]));
    expect(v4).toMatchObject({
      kind: 'ok',
      value: { command: 1, target: { host: '10.0.0.1', port: 443, type: 'ipv4' } },
    });
    const v6 = c.parseRequest(Buffer.from([5, 1, 0, 4, 0x20, 0x01, 0x0d, 0xb8, ...new Array(11).fill(0), 1, 0, 80]));
    expect(v6).toMatchObject({ kind: 'ok', value: { target: { host: '2001:db8::1', port: 80, type: 'ipv6' } } });
    const dn = c.parseRequest(Buffer.from([5, 1, 0, 3, 9, ...Buffer.from('files.test'.slice(0, 9)), 0, 80]));
    expect(dn).toMatchObject({ kind: 'ok', value: { target: { host: 'files.tes', port: 80, type: 'domain' } } });
  });

  it('maps a domain of length 0 to general failure and an unknown address type to 0x08', () => {
    expect(c.parseRequest(Buffer.from([5, 1, 0, 3, 0, 0, 80]))).toMatchObject({
      kind: 'malformed',
      reason: 'empty-domain',
      reply: 0x01,
    });
    expect(c.parseRequest(Buffer.from([5, 1, 0, 9, 0, 0]))).toMatchObject({ kind: 'malformed', reply: 0x08 });
  });

  it('answers an unknown command with 0x07', () => {
    expect(c.parseRequest(Buffer.from([5, 9, 0, 1, 1, 2, 3, 4, 0, 80]))).toMatchObject({
      kind: 'malformed',
      reply: 0x07,
    });
  });

  it('encodes replies with IPv4, IPv4-mapped and IPv6 bound addresses', () => {
    expect([...c.encodeReply(0, '127.0.0.1', 1080)]).toEqual([5, 0, 0, 1, 127, 0, 0, 1, 4, 56]);
    expect([...c.encodeReply(0, '::ffff:10.1.2.3', 1)]).toEqual([5, 0, 0, 1, 10, 1, 2, 3, 0, 1]);
    const v6 = c.encodeReply(5, '2001:db8::1', 2);
    expect(v6.length).toBe(22);
    expect(v6[3]).toBe(4);
    expect(c.parseRequest(Buffer.concat([Buffer.from([5, 1]), v6.subarray(2)]))).toMatchObject({
      kind: 'ok',
      value: { target: { host: '2001:db8::1', port: 2 } },
    });
  });

  it('round-trips UDP headers and leaves the payload offset', () => {
    const head = c.encodeUdpHeader('192.0.2.7', 53);
    const parsed = c.parseUdpHeader(Buffer.concat([head, Buffer.from('payload')]));
    expect(parsed).toMatchObject({
      kind: 'ok',
      value: { frag: 0, headerLength: 10, target: { host: '192.0.2.7', port: 53 } },
    });
  });

  it('never throws on random input (property)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 600 }), (bytes) => {
        const b = Buffer.from(bytes);
        for (const parse of [c.parseGreeting, c.parseUserPass, c.parseRequest, c.parseUdpHeader]) {
          const r = parse(b);
          expect(['ok', 'incomplete', 'malformed']).toContain(r.kind);
          if (r.kind === 'ok') expect(r.consumed).toBeLessThanOrEqual(b.length);
        }
      }),
      { numRuns: 5_000 },
    );
  });

  it('parses a request split at any byte boundary the same as whole (property)', () => {
    const whole = Buffer.from([5, 1, 0, 3, 4, ...Buffer.from('a.io'), 1, 0]);
    fc.assert(
      fc.property(fc.integer({ min: 0, max: whole.length }), (cut) => {
        const first = c.parseRequest(whole.subarray(0, cut));
        if (cut < whole.length) expect(first.kind).toBe('incomplete');
        else expect(first).toMatchObject({ kind: 'ok', consumed: whole.length });
      }),
    );
  });
});
