import type { Readable } from 'node:stream';
import { SNIFF_MAX_BYTES, sniffName } from '../router/index.js';

/** How long a client addressed by IP is waited for to speak first (a server-first protocol never will). */
export const SNIFF_WAIT_MS = 300;

/** The sniffer's question: do these bytes name a host (or show they never will)? */
function sniffSettled(buf: Buffer): boolean {
  if (buf.length >= SNIFF_MAX_BYTES) return true;
  const s = sniffName(buf);
  return s === null || 'name' in s;
}

/**
 * Reads a paused client's first bytes until `settled` says they are enough (by default: they name
 * a host, or cannot, or SNIFF_MAX_BYTES arrived), `waitMs` pass from the start (a fixed deadline,
 * not a silence timer; SNIFF_WAIT_MS by default), or it closes; `already` is what was read before.
 * The socket is paused again afterwards with nothing lost: every byte read is in the result.
 */
export function readFirstBytes(
  socket: Readable,
  already: Buffer,
  until: { settled: (buf: Buffer) => boolean; waitMs: number } = { settled: sniffSettled, waitMs: SNIFF_WAIT_MS },
): Promise<Buffer> {
  let buf = already;
  const settled = (): boolean => until.settled(buf);
  if (buf.length > 0 && settled()) return Promise.resolve(buf);
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('end', done);
      socket.off('close', done);
      socket.pause();
      resolve(buf);
    };
    const onData = (chunk: Buffer): void => {
      buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
      if (settled()) done();
    };
    const timer = setTimeout(done, until.waitMs);
    timer.unref();
    socket.on('data', onData);
    socket.once('end', done);
    socket.once('close', done);
    socket.resume();
  });
}
