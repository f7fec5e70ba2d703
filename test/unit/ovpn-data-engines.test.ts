import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadNative } from '../../core/common/index.js';
import { DataChannel, dataEngineStatus, sliceKey2, type DataEngine } from '../../core/ovpn/index.js';

// The native engine (gatehop-native, contexts keyed once) and the JavaScript one (Node's crypto)
// must put the same bytes on the wire and accept exactly the same packets.
const status = dataEngineStatus();
const haveNative = status.engine === 'native';

const CASES: Array<[string, string | null, number | null]> = [
  ['AES-128-CBC', 'SHA1', null],
  ['AES-192-CBC', 'SHA256', null],
  ['AES-256-CBC', 'SHA512', 3],
  ['AES-128-GCM', null, null],
  ['AES-256-GCM', null, 0x123456],
  ['CHACHA20-POLY1305', null, 9],
];
const SIZES = [0, 1, 15, 16, 17, 31, 576, 1400, 1500, 9000, 65_000];

function endpoints(
  cipher: string,
  auth: string | null,
  peerId: number | null,
  client: DataEngine,
  server: DataEngine,
  keyId = 0,
): [DataChannel, DataChannel] {
  const c = sliceKey2(randomBytes(256));
  const s = {
    encryptCipher: c.decryptCipher,
    encryptHmac: c.decryptHmac,
    decryptCipher: c.encryptCipher,
    decryptHmac: c.encryptHmac,
  };
  return [
    new DataChannel(cipher, auth, c, keyId, peerId, client),
    new DataChannel(cipher, auth, s, keyId, peerId, server),
  ];
}

/** A sealed batch cut back into packets (TCP records carry a u16 length first). */
function split(
  sealed: { data: Buffer; lengths: Uint32Array; count: number; bytes: number },
  framed: boolean,
): Buffer[] {
  const out: Buffer[] = [];
  let at = 0;
  for (let i = 0; i < sealed.count; i++) {
    if (framed) {
      expect(sealed.data.readUInt16BE(at)).toBe(sealed.lengths[i]);
      at += 2;
    }
    out.push(Buffer.from(sealed.data.subarray(at, at + sealed.lengths[i]!)));
    at += sealed.lengths[i]!;
  }
  expect(at).toBe(sealed.bytes);
  return out;
}

describe('data channel engines', () => {
  it('CI builds and runs the native engine (the JavaScript path only when turned off)', () => {
    if (process.env.CI === 'true' && process.env.GATEHOP_NATIVE !== 'off')
      expect(status).toMatchObject({ engine: 'native', reason: null });
    if (process.env.GATEHOP_NATIVE === 'off') expect(status.engine).toBe('javascript');
    // Wherever the module loaded and found a libcrypto, the native engine is the one that runs.
    const native = loadNative();
    expect(status.engine).toBe(native && !('reason' in native.cryptoStatus()) ? 'native' : 'javascript');
  });

  describe.skipIf(!haveNative)('native against JavaScript', () => {
    it.each(CASES)(
      '%s / %s / peer-id %s: each engine opens what the other sealed, every size',
      (cipher, auth, peerId) => {
        for (const [a, b] of [
          ['native', 'javascript'],
          ['javascript', 'native'],
        ] as const) {
          const [tx, rx] = endpoints(cipher, auth, peerId, a, b);
          for (const size of SIZES) {
            const payload = randomBytes(size);
            const wire = tx.encrypt(payload);
            expect(rx.decrypt(wire)?.equals(payload), `${a}→${b} ${size} B`).toBe(true);
          }
          expect(rx.stats).toMatchObject({ received: SIZES.length, decryptFailures: 0, replays: 0 });
        }
      },
    );

    it.each(CASES.filter(([c]) => !c.endsWith('CBC')))(
      '%s: the AEAD engines write identical bytes (same key, same packet id)',
      (cipher, auth, peerId) => {
        const keys = sliceKey2(randomBytes(256));
        const native = new DataChannel(cipher, auth, keys, 2, peerId, 'native');
        const js = new DataChannel(cipher, auth, keys, 2, peerId, 'javascript');
        for (const size of SIZES) {
          const payload = randomBytes(size);
          expect(native.encrypt(payload).equals(js.encrypt(payload)), `${size} B`).toBe(true);
        }
      },
    );

    it('CBC: the native layout is the documented one (header | HMAC | IV | ciphertext of id ‖ payload)', () => {
      const [tx] = endpoints('AES-128-CBC', 'SHA1', null, 'native', 'javascript');
      for (const size of [0, 11, 12, 1400])
        expect(tx.encrypt(randomBytes(size)).length).toBe(1 + 20 + 16 + 16 * Math.ceil((4 + size + 1) / 16));
    });

    it('batches of any size (0, 1, many) seal and open packet for packet, framed for TCP or not, either way round', () => {
      fc.assert(
        fc.property(
          fc.constantFrom(...CASES),
          fc.array(fc.integer({ min: 0, max: 2000 }), { maxLength: 40 }),
          fc.boolean(),
          fc.boolean(),
          ([cipher, auth, peerId], sizes, framed, nativeSeals) => {
            const [tx, rx] = endpoints(
              cipher,
              auth,
              peerId,
              nativeSeals ? 'native' : 'javascript',
              nativeSeals ? 'javascript' : 'native',
            );
            const payloads = sizes.map((n) => randomBytes(n));
            const packets = split(tx.sealBatch(payloads, framed), framed);
            expect(packets.length).toBe(payloads.length);
            const opened = rx.openBatch(packets);
            opened.forEach((p, i) => expect(p?.equals(payloads[i]!)).toBe(true));
            expect(tx.stats.sent).toBe(payloads.length);
          },
        ),
        { numRuns: 150 },
      );
    });

    it('a packet that fails authentication, or a replay, in the middle of a batch drops only itself', () => {
      fc.assert(
        fc.property(
          fc.constantFrom(...CASES),
          fc.integer({ min: 1, max: 30 }),
          fc.nat(),
          fc.nat(),
          fc.constantFrom<DataEngine>('native', 'javascript'),
          ([cipher, auth, peerId], count, badSeed, byteSeed, opener) => {
            const [tx, rx] = endpoints(cipher, auth, peerId, opener === 'native' ? 'javascript' : 'native', opener);
            const payloads = Array.from({ length: count }, (_, i) => randomBytes(20 + i * 37));
            const packets = split(tx.sealBatch(payloads, false), false);
            const bad = badSeed % count;
            const victim = packets[bad]!;
            // Anything after the header (CBC authenticates neither the opcode nor P_DATA_V2's peer-id, like OpenVPN).
            const head = peerId === null ? 1 : 4;
            victim[head + (byteSeed % (victim.length - head))]! ^= 0x40;
            const replayOf = (bad + 1) % count;
            const batch = [...packets, Buffer.from(packets[replayOf]!)]; // a copy: openBatch decrypts in place
            const opened = rx.openBatch(batch);
            opened.slice(0, count).forEach((p, i) => {
              if (i === bad) expect(p).toBeNull();
              else expect(p?.equals(payloads[i]!)).toBe(true);
            });
            // The replayed copy: dropped as a replay, or as a failure when it copies the tampered one.
            expect(opened[count]).toBeNull();
            expect(rx.stats.decryptFailures + rx.stats.replays).toBe(2);
            expect(rx.stats.received).toBe(count - 1);
          },
        ),
        { numRuns: 150 },
      );
    });

    it('hostile bytes never crash the native engine: short, wrong key id, wrong opcode, random', () => {
      const [, rx] = endpoints('AES-128-CBC', 'SHA1', null, 'javascript', 'native', 1);
      const [, gcm] = endpoints('AES-256-GCM', null, 5, 'javascript', 'native', 1);
      fc.assert(
        fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
          expect(rx.openBatch([Buffer.from(bytes)])[0]).toBeNull();
          expect(gcm.openBatch([Buffer.from(bytes)])[0]).toBeNull();
        }),
        { numRuns: 2000 },
      );
      const empty = Buffer.alloc(0);
      expect(rx.openBatch([empty, Buffer.of(0x31), Buffer.of(0x30)])).toEqual([null, null, null]);
    });

    it('the native calls refuse bad arguments with a coded error instead of writing out of bounds', () => {
      const native = loadNative()!;
      const keys = sliceKey2(randomBytes(256));
      const key = native.dataKeyOpen({
        cipher: 'aes-128-cbc',
        digest: 'sha1',
        keyId: 0,
        peerId: -1,
        encKey: keys.encryptCipher.subarray(0, 16),
        decKey: keys.decryptCipher.subarray(0, 16),
        encHmac: keys.encryptHmac.subarray(0, 20),
        decHmac: keys.decryptHmac.subarray(0, 20),
        encIv: keys.encryptHmac.subarray(0, 8),
        decIv: keys.decryptHmac.subarray(0, 8),
      });
      expect(() => native.dataSeal(key, [Buffer.alloc(100)], Buffer.alloc(120), new Uint32Array(1), false)).toThrow(
        expect.objectContaining({ code: 'GATEHOP_NATIVE_ARGUMENT' }),
      );
      expect(() =>
        native.dataSeal(key, [Buffer.alloc(1), Buffer.alloc(1)], Buffer.alloc(1000), new Uint32Array(1), false),
      ).toThrow(/lengths/);
      expect(() => native.dataOpen(key, [Buffer.alloc(1)], new Int32Array(1))).toThrow(/results/);
      expect(() => native.dataOpen({} as never, [], new Int32Array(2))).toThrow(/data key/);
      expect(() =>
        native.dataKeyOpen({
          cipher: 'des-cbc-nope',
          digest: 'sha1',
          keyId: 0,
          peerId: -1,
          encKey: Buffer.alloc(16),
          decKey: Buffer.alloc(16),
          encHmac: Buffer.alloc(20),
          decHmac: Buffer.alloc(20),
          encIv: Buffer.alloc(8),
          decIv: Buffer.alloc(8),
        }),
      ).toThrow(expect.objectContaining({ code: 'GATEHOP_NATIVE_CRYPTO' }));
      expect(() => native.udpSend({} as never, Buffer.alloc(4), new Uint32Array([4]), 1)).toThrow(/UDP socket/);
      const recv = Buffer.alloc(64 * 4096);
      expect(() => native.udpOpen('not-an-ip', 1194, 0, new Uint32Array(64), recv, () => {})).toThrow(
        expect.objectContaining({ code: 'GATEHOP_NATIVE_ARGUMENT' }),
      );
      expect(() => native.udpOpen('127.0.0.1', 1194, 0, new Uint32Array(8), recv, () => {})).toThrow(
        /Uint32Array\(64\)/,
      );
      // A receive buffer too small for a full read of 64 datagrams would be written past its end.
      expect(() => native.udpOpen('127.0.0.1', 1194, 0, new Uint32Array(64), Buffer.alloc(4096), () => {})).toThrow(
        /64 × 4096/,
      );
    });
  });
});
