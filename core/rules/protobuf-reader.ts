import { RuleParseError } from './rule-error.js';

/** One field of a protocol-buffers message: its number, and its value (varint) or bytes (length-delimited). */
export type PbField = { no: number; wire: 0; value: number } | { no: number; wire: 2; start: number; end: number };

/**
 * The fields of the message in `buf[start, end)`, in order: varints (wire type 0) and
 * length-delimited values (2); 64- and 32-bit fields (1, 5) are skipped. What geosite.dat uses,
 * nothing more. Every length is checked against the message's end: a truncated or hostile file is
 * an error, never a read past it.
 */
export function* pbFields(buf: Uint8Array, start = 0, end = buf.length): Generator<PbField> {
  let at = start;
  const varint = (): number => {
    let result = 0;
    let shift = 0;
    for (;;) {
      if (at >= end) throw new RuleParseError('a truncated protobuf varint');
      const b = buf[at++]!;
      // Values past 2^53 lose precision; only lengths and small enums are read here.
      result += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) return result;
      shift += 7;
      if (shift > 63) throw new RuleParseError('a protobuf varint longer than 10 bytes');
    }
  };
  while (at < end) {
    const key = varint();
    const no = Math.floor(key / 8);
    const wire = key % 8;
    if (no === 0) throw new RuleParseError('a protobuf field numbered 0');
    if (wire === 0) yield { no, wire: 0, value: varint() };
    else if (wire === 2) {
      const len = varint();
      if (len > end - at) throw new RuleParseError('a protobuf field longer than its message');
      yield { no, wire: 2, start: at, end: at + len };
      at += len;
    } else if (wire === 1 || wire === 5) {
      at += wire === 1 ? 8 : 4;
      if (at > end) throw new RuleParseError('a truncated protobuf fixed field');
    } else throw new RuleParseError(`protobuf wire type ${wire} is not read here`);
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: false });

export function pbString(buf: Uint8Array, f: { start: number; end: number }): string {
  return utf8.decode(buf.subarray(f.start, f.end));
}
