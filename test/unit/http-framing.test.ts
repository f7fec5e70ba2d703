import { describe, expect, it } from 'vitest';
import { decodeChunked, HttpFraming } from '../../core/common/index.js';

/** Feeds `raw` in pieces of `size` bytes; the index of the byte that completed it, or -1. */
function completesAt(raw: Buffer, size: number): number {
  const f = new HttpFraming();
  for (let o = 0; o < raw.length; o += size) {
    if (f.push(raw.subarray(o, o + size))) {
      expect(f.bytes.equals(raw.subarray(0, Math.min(raw.length, o + size)))).toBe(true);
      return Math.min(raw.length, o + size) - 1;
    }
  }
  return -1;
}

const head = (lines: string[]): string => `${lines.join('\r\n')}\r\n\r\n`;

describe('HttpFraming: an answer told whole by its own framing, however it is split (#59 review)', () => {
  const chunked = Buffer.from(
    head(['HTTP/1.1 200 OK', 'Transfer-Encoding: chunked']) + '5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\n\r\n',
    'latin1',
  );
  const sized = Buffer.from(head(['HTTP/1.1 200 OK', 'Content-Length: 11']) + 'hello world', 'latin1');

  /** Where an answer is whole: its last byte, or for a chunked one the end of the zero-size line (trailers are not waited for). */
  const wholeAt = (raw: Buffer, isChunked: boolean): number =>
    isChunked ? raw.lastIndexOf('0\r\n') + 2 : raw.length - 1;

  it('is whole where its framing ends, for every piece size, chunked and Content-Length alike', () => {
    for (const [raw, isChunked] of [
      [chunked, true],
      [sized, false],
    ] as const)
      for (let size = 1; size <= raw.length; size++) {
        const at = completesAt(raw, size);
        // A piece that carries the end is taken whole.
        expect(at, `pieces of ${size}`).toBe(
          Math.min(raw.length, (Math.floor(wholeAt(raw, isChunked) / size) + 1) * size) - 1,
        );
      }
    expect(decodeChunked(chunked.subarray(chunked.indexOf('\r\n\r\n') + 4))?.toString()).toBe('hello world');
  });

  it('a status without a body is whole at its head; one with neither length nor chunks only at the end', () => {
    const noBody = Buffer.from(head(['HTTP/1.1 204 No Content', 'Connection: keep-alive']), 'latin1');
    expect(completesAt(noBody, 1)).toBe(noBody.length - 1);
    expect(completesAt(Buffer.from(head(['HTTP/1.0 200 OK']) + 'until the end', 'latin1'), 3)).toBe(-1);
  });

  it('a chunked body cut short, or with a size line that is not one, is never whole by its framing', () => {
    expect(completesAt(chunked.subarray(0, chunked.length - 3), 1)).toBe(-1);
    const bad = Buffer.from(
      head(['HTTP/1.1 200 OK', 'Transfer-Encoding: chunked']) + 'zz\r\nhello\r\n0\r\n\r\n',
      'latin1',
    );
    expect(completesAt(bad, 2)).toBe(-1);
    const longLine = Buffer.from(
      head(['HTTP/1.1 200 OK', 'Transfer-Encoding: chunked']) + `5;${'x'.repeat(2000)}\r\nhello\r\n0\r\n\r\n`,
      'latin1',
    );
    expect(completesAt(longLine, 7)).toBe(-1);
  });

  it('a large chunked answer sent one byte at a time is read through (each byte looked at a bounded number of times)', () => {
    const body = Array.from(
      { length: 256 },
      (_, i) => `100\r\n${String.fromCharCode(97 + (i % 26)).repeat(256)}\r\n`,
    ).join('');
    const raw = Buffer.from(head(['HTTP/1.1 200 OK', 'Transfer-Encoding: chunked']) + body + '0\r\n\r\n', 'latin1');
    expect(completesAt(raw, 1)).toBe(wholeAt(raw, true));
  });
});
