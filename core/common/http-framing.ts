/**
 * An HTTP/1.1 response read from a peer that does not close (keep-alive), told whole by its own
 * framing as the bytes come: a status without a body (1xx, 204, 304), Content-Length, or chunked
 * (RFC 9112 §6, §7.1). Each byte is looked at a bounded number of times, however the peer splits
 * its answer: a node that sends one byte per segment costs linear work, not a fresh join and parse
 * of everything so far at each segment. The caller bounds how much it reads (a byte meter).
 */
/** A chunk's size line with its extensions, at most (longer: the framing does not hold). */
const MAX_SIZE_LINE = 1024;

export class HttpFraming {
  #buf = Buffer.alloc(4096);
  #len = 0;
  /** Where the head's blank line is looked for next. */
  #headScan = 0;
  /** The offset where the body starts, once the head is whole. */
  #bodyAt = -1;
  #mode: 'head' | 'done' | 'length' | 'chunked' | 'until-close' = 'head';
  /** Content-Length: the offset where the answer ends. */
  #endAt = 0;
  /** Chunked: where the next chunk's size line starts, and where its end of line is looked for next. */
  #chunkAt = 0;
  #eolScan = 0;

  /** The answer so far. */
  get bytes(): Buffer {
    return this.#buf.subarray(0, this.#len);
  }

  /** Whether the answer is whole (by its framing; one framed by the end of the connection never is). */
  get complete(): boolean {
    return this.#mode === 'done';
  }

  /** Takes the next bytes; returns whether the answer is now whole. */
  push(chunk: Buffer): boolean {
    this.#append(chunk);
    if (this.#mode === 'head') this.#readHead();
    if (this.#mode === 'length' && this.#len >= this.#endAt) this.#mode = 'done';
    if (this.#mode === 'chunked') this.#readChunks();
    return this.#mode === 'done';
  }

  #append(chunk: Buffer): void {
    if (this.#len + chunk.length > this.#buf.length) {
      const grown = Buffer.alloc(Math.max(this.#buf.length * 2, this.#len + chunk.length));
      this.#buf.copy(grown, 0, 0, this.#len);
      this.#buf = grown;
    }
    chunk.copy(this.#buf, this.#len);
    this.#len += chunk.length;
  }

  #readHead(): void {
    const end = this.bytes.indexOf('\r\n\r\n', this.#headScan);
    if (end < 0) {
      this.#headScan = Math.max(0, this.#len - 3);
      return;
    }
    this.#bodyAt = end + 4;
    const head = this.#buf.subarray(0, end).toString('latin1');
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? NaN);
    if (status === 204 || status === 304 || (status >= 100 && status < 200)) {
      this.#mode = 'done';
    } else if (/\r\ntransfer-encoding:[^\r]*chunked/i.test(head)) {
      this.#mode = 'chunked';
      this.#chunkAt = this.#eolScan = this.#bodyAt;
    } else {
      const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
      if (length) {
        this.#mode = 'length';
        this.#endAt = this.#bodyAt + Number(length[1]);
      } else this.#mode = 'until-close';
    }
  }

  #readChunks(): void {
    for (;;) {
      const eol = this.bytes.indexOf('\r\n', this.#eolScan);
      if (eol < 0) {
        this.#eolScan = Math.max(this.#chunkAt, this.#len - 1);
        return;
      }
      const line = eol - this.#chunkAt;
      const size = line > MAX_SIZE_LINE ? NaN : parseInt(this.#buf.subarray(this.#chunkAt, eol).toString('latin1'), 16);
      // A size line that is not one: the framing does not hold, so only the end says it is over.
      if (!Number.isFinite(size) || size < 0) {
        this.#mode = 'until-close';
        return;
      }
      if (size === 0) {
        this.#mode = 'done';
        return;
      }
      const next = eol + 2 + size + 2;
      if (this.#len < next) {
        this.#eolScan = eol; // the same size line, read again when the chunk has come
        return;
      }
      this.#chunkAt = this.#eolScan = next;
    }
  }
}
