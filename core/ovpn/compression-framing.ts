import { PING_PAYLOAD } from './data-channel.js';
/**
 * Compression framing of data-channel payloads (notes §6.6). We never compress, but a server
 * configured with `comp-lzo` or `compress` frames every payload (pings included), so both sides
 * must agree on the framing byte. Payloads the server did compress (LZO, LZ4) cannot be read and
 * are dropped (counted by the caller).
 */
export type Framing = 'none' | 'lzo' | 'stub' | 'v2';

const NO_COMPRESS = 0xfa;
const NO_COMPRESS_SWAP = 0xfb;
const V2_ESCAPE = 0x50;

/** The framing a `comp-lzo …` or `compress …` directive (pushed or in the profile) implies. */
export function framingFor(directive: string | null): Framing {
  if (!directive) return 'none';
  const [name, arg] = directive.trim().split(/\s+/);
  if (name === 'comp-lzo') return 'lzo';
  if (name !== 'compress') return 'none';
  return arg === 'stub-v2' || arg === 'lz4-v2' ? 'v2' : 'stub';
}

/** Frames an outgoing IP packet. */
export function frame(framing: Framing, ip: Buffer): Buffer {
  switch (framing) {
    case 'none':
      return ip;
    case 'lzo':
      return Buffer.concat([Buffer.of(NO_COMPRESS), ip]);
    case 'stub': {
      // "swap": the first byte moves to the end and the marker takes its place.
      if (ip.length === 0) return Buffer.of(NO_COMPRESS);
      const out = Buffer.allocUnsafe(ip.length + 1);
      out[0] = NO_COMPRESS_SWAP;
      ip.copy(out, 1, 1);
      out[ip.length] = ip[0]!;
      return out;
    }
    case 'v2':
      return ip.length > 0 && ip[0] === V2_ESCAPE ? Buffer.concat([Buffer.of(V2_ESCAPE, 0x00), ip]) : ip;
  }
}

/** The IP packet inside a received payload, or null when it was compressed (or malformed). */
export function unframe(framing: Framing, payload: Buffer): Buffer | null {
  switch (framing) {
    case 'none':
      return payload;
    case 'lzo':
    case 'stub': {
      const b = payload[0];
      if (b === NO_COMPRESS) return payload.subarray(1);
      if (b === NO_COMPRESS_SWAP) {
        if (payload.length < 2) return Buffer.alloc(0);
        const out = Buffer.allocUnsafe(payload.length - 1);
        out[0] = payload[payload.length - 1]!;
        payload.copy(out, 1, 1, payload.length - 1);
        return out;
      }
      return null; // 0x66 LZO, 0x69 LZ4, or garbage
    }
    case 'v2':
      if (payload[0] !== V2_ESCAPE) return payload;
      return payload[1] === 0x00 ? payload.subarray(2) : null;
  }
}

/**
 * What a batch of opened data packets holds for the tunnel's owner: the IP packets, unframed, with
 * the keepalive pings and compressed payloads (which Gatehop does not decompress) taken out.
 * `heard`: any packet opened at all (a ping counts as hearing the server).
 */
export function innerPackets(
  payloads: ReadonlyArray<Buffer | null>,
  framing: Framing,
): { inners: Buffer[]; heard: boolean; compressed: number } {
  let heard = false;
  let compressed = 0;
  const inners: Buffer[] = [];
  for (const payload of payloads) {
    if (!payload) continue;
    heard = true;
    const inner = framing === 'none' ? payload : unframe(framing, payload);
    if (!inner) compressed++;
    else if (!(inner.length === PING_PAYLOAD.length && inner.equals(PING_PAYLOAD))) inners.push(inner);
  }
  return { inners, heard, compressed };
}
