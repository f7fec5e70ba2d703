import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DataChannel,
  decodeControl,
  encodeControl,
  frame,
  framingFor,
  Op,
  optionsString,
  parsePushOptions,
  parseServerKeyMethod2,
  PING_PAYLOAD,
  sliceKey2,
  TcpRecordReader,
  tls1Prf,
  unframe,
} from '../../core/ovpn/index.js';

describe('OpenVPN PRF', () => {
  it('matches OpenVPN 2.6 test_crypto.c crypto_test_tls_prf (known answer)', () => {
    const secret = Buffer.from(
      'Lorem ipsum dolor sit amet, consectetur adipisici elit, sed eiusmod tempor incidunt ut labore et dolore magna aliqua.',
    );
    const seed = Buffer.from('Quis aute iure reprehenderit in voluptate velit esse cillum dolore');
    expect(secret.length).toBe(117);
    expect(tls1Prf(secret, seed, 32).toString('hex')).toBe(
      'd98c8518c85e946927916acfc2d592fbb1567e4b4b1459e6a904ac2ddab72d67',
    );
  });
});

describe('control packets', () => {
  const sid = Buffer.from('0102030405060708', 'hex');
  const peer = Buffer.from('a1a2a3a4a5a6a7a8', 'hex');

  it('encodes the client hard reset as exactly 14 bytes (SoftEther detects OpenVPN by "00 0E")', () => {
    const b = encodeControl({
      opcode: Op.CONTROL_HARD_RESET_CLIENT_V2,
      keyId: 0,
      sessionId: sid,
      acks: [],
      peerSessionId: null,
      messageId: 0,
      payload: Buffer.alloc(0),
    });
    expect(b.toString('hex')).toBe('38010203040506070800' + '00000000');
    expect(b.length).toBe(14);
  });

  it('round-trips acks, peer session id and message id, and never writes more than 4 acks', () => {
    const b = encodeControl({
      opcode: Op.CONTROL_V1,
      keyId: 0,
      sessionId: sid,
      acks: [1, 2, 3, 4, 5, 6],
      peerSessionId: peer,
      messageId: 9,
      payload: Buffer.from('tls'),
    });
    const p = decodeControl(b)!;
    expect(p.acks).toEqual([1, 2, 3, 4]);
    expect(p.peerSessionId!.equals(peer)).toBe(true);
    expect(p.messageId).toBe(9);
    expect(p.payload.toString()).toBe('tls');
    const ack = decodeControl(
      encodeControl({
        opcode: Op.ACK_V1,
        keyId: 0,
        sessionId: sid,
        acks: [7],
        peerSessionId: peer,
        messageId: null,
        payload: Buffer.alloc(0),
      }),
    )!;
    expect(ack).toMatchObject({ opcode: Op.ACK_V1, acks: [7], messageId: null });
  });

  it('random bytes never throw from the packet parsers (property)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        const b = Buffer.from(bytes);
        decodeControl(b);
        parseServerKeyMethod2(b);
      }),
      { numRuns: 5000 },
    );
  });

  it('rejects an impossible TCP record length', () => {
    const r = new TcpRecordReader(2048);
    expect(r.push(Buffer.from([0, 3, 1, 2, 3, 0]))).toHaveLength(1);
    expect(() => new TcpRecordReader(2048).push(Buffer.from([0xff, 0xff]))).toThrow(/65535/);
    expect(() => new TcpRecordReader(2048).push(Buffer.from([0, 0]))).toThrow();
  });
});

describe('options string and push reply', () => {
  it('builds the VPN Gate TCP options string of the notes', () => {
    expect(optionsString({ proto: 'tcp', cipher: 'AES-128-CBC', auth: 'SHA1', aead: false, keyBits: 128 })).toBe(
      'V4,dev-type tun,link-mtu 1559,tun-mtu 1500,proto TCPv4_CLIENT,cipher AES-128-CBC,auth SHA1,keysize 128,key-method 2,tls-client',
    );
  });

  it('reads SoftEther Stable (net30 ifconfig), SoftEther 5.x (subnet) and OpenVPN 2.6 replies', () => {
    expect(
      parsePushOptions(
        'ping 3,ping-restart 10,ifconfig 10.211.1.5 10.211.1.6,dhcp-option DNS 10.211.254.254,route-gateway 10.211.1.6,redirect-gateway def1',
      ),
    ).toMatchObject({
      address: '10.211.1.5',
      netmask: '255.255.255.252',
      gateway: '10.211.1.6',
      dns: ['10.211.254.254'],
      pingS: 3,
      pingRestartS: 10,
    });
    expect(
      parsePushOptions(
        'ping 3,ping-restart 10,topology subnet,ifconfig 192.168.30.10 255.255.255.0,dhcp-option DNS 192.168.30.1,route-gateway 192.168.30.1,block-outside-dns',
      ),
    ).toMatchObject({
      address: '192.168.30.10',
      netmask: '255.255.255.0',
      gateway: '192.168.30.1',
    });
    const first = parsePushOptions('route-gateway 10.8.0.1,topology subnet,ping 10,push-continuation 2');
    expect(first.continuation).toBe(2);
    expect(
      parsePushOptions(
        'ifconfig 10.8.0.2 255.255.255.0,peer-id 3,cipher AES-256-GCM,protocol-flags cc-exit tls-ekm,push-continuation 1',
        first,
      ),
    ).toMatchObject({
      address: '10.8.0.2',
      gateway: '10.8.0.1',
      peerId: 3,
      cipher: 'AES-256-GCM',
      tlsEkm: true,
      ccExit: true,
      continuation: 1,
    });
    // SoftEther pushes no protocol flags: no EXIT message at shutdown.
    expect(parsePushOptions('ping 3,ping-restart 10,ifconfig 10.211.1.5 10.211.1.6').ccExit).toBeUndefined();
  });
});

describe('compression framing (notes §6.6)', () => {
  const ip = Buffer.from('4500001c0001000040010000', 'hex');
  it('knows the framing each directive implies', () => {
    expect(
      [
        'comp-lzo',
        'comp-lzo no',
        'compress',
        'compress stub',
        'compress lz4',
        'compress stub-v2',
        'compress lz4-v2',
        null,
      ].map(framingFor),
    ).toEqual(['lzo', 'lzo', 'stub', 'stub', 'stub', 'v2', 'v2', 'none']);
  });
  it('frames and unframes: 0xFA prefix, 0xFB with the first byte swapped to the end, 0x50 escape', () => {
    expect(frame('lzo', ip)).toEqual(Buffer.concat([Buffer.of(0xfa), ip]));
    const swapped = frame('stub', ip);
    expect(swapped[0]).toBe(0xfb);
    expect(swapped.at(-1)).toBe(0x45);
    expect(swapped.subarray(1, -1)).toEqual(ip.subarray(1));
    expect(frame('v2', ip)).toBe(ip); // raw IP needs no marker
    const p50 = Buffer.from([0x50, 1, 2]);
    expect(frame('v2', p50)).toEqual(Buffer.from([0x50, 0, 0x50, 1, 2]));
    for (const f of ['none', 'lzo', 'stub', 'v2'] as const) {
      for (const payload of [ip, p50, PING_PAYLOAD, Buffer.of(7)])
        expect(unframe(f, frame(f, payload))).toEqual(payload);
    }
    // A stub sender may use the unswapped marker too.
    expect(unframe('stub', Buffer.concat([Buffer.of(0xfa), ip]))).toEqual(ip);
  });
  it('reports compressed payloads (which we cannot read) as null', () => {
    expect(unframe('lzo', Buffer.of(0x66, 1, 2))).toBeNull();
    expect(unframe('stub', Buffer.of(0x69, 1, 2))).toBeNull();
    expect(unframe('v2', Buffer.of(0x50, 0x01, 1, 2))).toBeNull();
  });
});

describe('data channel', () => {
  function pair(cipher: string, auth: string | null, peerId: number | null): [DataChannel, DataChannel] {
    const key2 = randomBytes(256);
    const client = sliceKey2(key2);
    const server = {
      encryptCipher: client.decryptCipher,
      encryptHmac: client.decryptHmac,
      decryptCipher: client.encryptCipher,
      decryptHmac: client.encryptHmac,
    };
    return [new DataChannel(cipher, auth, client, 0, peerId), new DataChannel(cipher, auth, server, 0, peerId)];
  }

  it.each([
    ['AES-128-CBC', 'SHA1', null, 1 + 20 + 16],
    ['AES-256-CBC', 'SHA256', null, 1 + 32 + 16],
    ['AES-128-GCM', null, null, 1 + 4 + 16],
    ['AES-256-GCM', null, 7, 4 + 4 + 16],
    ['CHACHA20-POLY1305', null, 1, 4 + 4 + 16],
  ])('%s (auth %s, peer-id %s): round trip with the documented layout', (cipher, auth, peerId, overhead) => {
    const [c, s] = pair(cipher, auth, peerId);
    const payload = randomBytes(1400);
    const wire = c.encrypt(payload);
    expect(wire[0]! >> 3).toBe(peerId === null ? Op.DATA_V1 : Op.DATA_V2);
    if (cipher.endsWith('CBC')) expect(wire.length).toBe(overhead + 16 * Math.ceil((4 + 1400 + 1) / 16));
    else expect(wire.length).toBe(overhead + 1400);
    expect(s.decrypt(wire)!.equals(payload)).toBe(true);
  });

  it('drops tampered packets, replays and ids far behind the window, counting each', () => {
    const [c, s] = pair('AES-128-CBC', 'SHA1', null);
    const first = c.encrypt(PING_PAYLOAD);
    const tampered = Buffer.from(first);
    tampered[tampered.length - 1]! ^= 1;
    expect(s.decrypt(tampered)).toBeNull();
    expect(s.decrypt(first)).not.toBeNull();
    expect(s.decrypt(first)).toBeNull(); // replay
    const later = Array.from({ length: 70 }, () => c.encrypt(Buffer.from('x')));
    expect(s.decrypt(later[69]!)).not.toBeNull();
    expect(s.decrypt(later[60]!)).not.toBeNull(); // out of order, inside the window
    expect(s.decrypt(later[0]!)).toBeNull(); // 69 behind: outside the window
    expect(s.stats).toMatchObject({ decryptFailures: 1, replays: 2 });
  });

  it('drops a packet of another key id or opcode though its HMAC is good (CBC leaves the opcode byte outside it; found by fuzzing)', () => {
    const [c, s] = pair('AES-128-CBC', 'SHA1', null);
    for (const first of [(Op.DATA_V1 << 3) | 2, (Op.CONTROL_V1 << 3) | 0]) {
      const p = c.encrypt(Buffer.from('x'));
      p[0] = first;
      expect(s.decrypt(p)).toBeNull();
    }
    expect(s.decrypt(c.encrypt(Buffer.from('x')))!.toString()).toBe('x');
    expect(s.stats.decryptFailures).toBe(2);
  });

  it('random bytes never throw from decrypt (property)', () => {
    const [, s] = pair('AES-256-GCM', null, null);
    const [, t] = pair('AES-128-CBC', 'SHA1', null);
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        const b = Buffer.from([0x30, ...bytes]);
        expect(s.decrypt(b)).toBeNull();
        expect(t.decrypt(b)).toBeNull();
      }),
      { numRuns: 2000 },
    );
  });
});
