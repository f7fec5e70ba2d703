/**
 * SSTP and PPP framing (core/sstp): what we build parses back to itself, the messages have the
 * byte layout [MS-SSTP] gives, and whatever a hostile server sends either parses or fails with
 * GH_ERR_SSTP_PROTOCOL, never with another exception.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isGatehopError } from '../../core/common/index.js';
import {
  callConnected,
  callConnectRequest,
  decodeCp,
  decodeFrame,
  decodeOptions,
  decodePacket,
  encodeControl,
  encodeCp,
  encodeData,
  encodeFrame,
  encodeOptions,
  MsgType,
  parseCryptoBindingRequest,
  Proto,
  SstpReader,
  statusInfoOf,
} from '../../core/sstp/index.js';

const protocolError = (fn: () => unknown): boolean => {
  try {
    fn();
    return true;
  } catch (err) {
    return isGatehopError(err, 'GH_ERR_SSTP_PROTOCOL');
  }
};

describe('SSTP packets', () => {
  it('builds a Call Connect Request as the spec lays it out (14 bytes, protocol PPP)', () => {
    expect(callConnectRequest().toString('hex')).toBe('1001000e0001000100010006' + '0001');
  });

  it('builds a Call Connected of 112 bytes with the binding fields in place', () => {
    const nonce = Buffer.alloc(32, 1);
    const cert = Buffer.alloc(32, 2);
    const mac = Buffer.alloc(32, 3);
    const p = callConnected(2, nonce, cert, mac);
    expect(p.length).toBe(112);
    expect(p.subarray(0, 16).toString('hex')).toBe('10010070000400010003006800000002');
    expect(p.subarray(16, 48).equals(nonce)).toBe(true);
    expect(p.subarray(48, 80).equals(cert)).toBe(true);
    expect(p.subarray(80, 112).equals(mac)).toBe(true);
  });

  it('reads the Crypto Binding Request of a Call Connect Ack and the status of a Nak', () => {
    const req = Buffer.concat([Buffer.from([0, 0, 0, 3]), Buffer.alloc(32, 9)]);
    const ack = decodePacket(encodeControl(MsgType.CALL_CONNECT_ACK, [{ id: 4, value: req }]));
    expect(ack.control && parseCryptoBindingRequest(ack)).toEqual({ hashBitmask: 3, nonce: Buffer.alloc(32, 9) });
    const status = Buffer.from([0, 0, 0, 1, 0, 0, 0, 4]);
    const nak = decodePacket(encodeControl(MsgType.CALL_CONNECT_NAK, [{ id: 2, value: status }]));
    expect(nak.control && statusInfoOf(nak)).toEqual({ attribute: 1, status: 4 });
  });

  it('round-trips data and control packets', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 4091 }), (bytes) => {
        const p = decodePacket(encodeData(Buffer.from(bytes)));
        return !p.control && p.data.equals(Buffer.from(bytes));
      }),
    );
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 0xffff }),
        fc.array(fc.record({ id: fc.integer({ min: 0, max: 255 }), value: fc.uint8Array({ maxLength: 200 }) }), {
          maxLength: 8,
        }),
        (type, attrs) => {
          const a = attrs.map((x) => ({ id: x.id, value: Buffer.from(x.value) }));
          const p = decodePacket(encodeControl(type, a));
          return (
            p.control &&
            p.type === type &&
            p.attributes.length === a.length &&
            p.attributes.every((x, i) => x.id === a[i]!.id && x.value.equals(a[i]!.value))
          );
        },
      ),
    );
  });

  it('refuses to build a packet over 4095 bytes', () => {
    expect(() => encodeData(Buffer.alloc(4092))).toThrow(/over the 4095-byte limit/);
  });

  it('garbage in: a packet parses or fails with GH_ERR_SSTP_PROTOCOL', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => protocolError(() => decodePacket(Buffer.from(bytes)))),
    );
    // Mostly-valid headers with lying lengths reach the attribute parser.
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 4, maxLength: 300 }), (bytes) => {
        const b = Buffer.from(bytes);
        b[0] = 0x10;
        b[1] = 1;
        b.writeUInt16BE(b.length, 2);
        return protocolError(() => decodePacket(b));
      }),
    );
  });

  it('cuts a byte stream into packets however it is split, and fails a bad header with a coded error', () => {
    const packets = [callConnectRequest(), encodeData(Buffer.alloc(1500, 7)), encodeControl(MsgType.ECHO_REQUEST)];
    const stream = Buffer.concat(packets);
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 400 }), { maxLength: 40 }), (cuts) => {
        const r = new SstpReader();
        const out: Buffer[] = [];
        let off = 0;
        for (const c of cuts) {
          out.push(...r.push(stream.subarray(off, off + c)));
          off += c;
          if (off >= stream.length) break;
        }
        if (off < stream.length) out.push(...r.push(stream.subarray(off)));
        return out.length === 3 && out.every((p, i) => p.equals(packets[i]!)) && r.buffered === 0;
      }),
    );
    expect(() => new SstpReader().push(Buffer.from('HTTP/1.1 200 OK\r\n'))).toThrow(
      expect.objectContaining({ code: 'GH_ERR_SSTP_PROTOCOL' }),
    );
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 64 }), { maxLength: 10 }), (chunks) => {
        const r = new SstpReader();
        return chunks.every((c) => protocolError(() => r.push(Buffer.from(c))));
      }),
    );
  });
});

describe('PPP frames', () => {
  it('frames with address, control and a 16-bit protocol, and reads compressed headers too', () => {
    expect(encodeFrame(Proto.LCP, Buffer.from([1, 2])).toString('hex')).toBe('ff03c0210102');
    expect(decodeFrame(Buffer.from('ff03002145', 'hex'))).toEqual({ protocol: 0x21, payload: Buffer.from([0x45]) });
    expect(decodeFrame(Buffer.from('c02101', 'hex'))).toEqual({ protocol: 0xc021, payload: Buffer.from([1]) }); // no address/control
    expect(decodeFrame(Buffer.from('2145', 'hex'))).toEqual({ protocol: 0x21, payload: Buffer.from([0x45]) }); // protocol compressed
  });

  it('round-trips control packets and options, padding after a packet allowed', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 255 }),
        fc.integer({ min: 0, max: 255 }),
        fc.array(fc.record({ type: fc.integer({ min: 0, max: 255 }), value: fc.uint8Array({ maxLength: 40 }) }), {
          maxLength: 6,
        }),
        (code, id, opts) => {
          const o = opts.map((x) => ({ type: x.type, value: Buffer.from(x.value) }));
          const padded = Buffer.concat([encodeCp(code, id, encodeOptions(o)), Buffer.alloc(3)]);
          const p = decodeCp(padded);
          const back = decodeOptions(p.data);
          return (
            p.code === code &&
            p.id === id &&
            back.length === o.length &&
            back.every((x, i) => x.type === o[i]!.type && x.value.equals(o[i]!.value))
          );
        },
      ),
    );
  });

  it('garbage in: frames, packets and options parse or fail with GH_ERR_SSTP_PROTOCOL', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 100 }), (bytes) => {
        const b = Buffer.from(bytes);
        return (
          protocolError(() => decodeFrame(b)) &&
          protocolError(() => decodeCp(b)) &&
          protocolError(() => decodeOptions(b))
        );
      }),
    );
  });
});
