import type { Readable } from 'node:stream';
import { SNIFF_MAX_BYTES, sniffName } from '../router/index.js';

/** How long a client addressed by IP is waited for to speak first (a server-first protocol never will). */
export const SNIFF_WAIT_MS = 300;

/**
 * Reads a paused client's first bytes until they name a host (or cannot), SNIFF_MAX_BYTES arrive,
 * SNIFF_WAIT_MS pass from the start (a fixed deadline, not a silence timer), or it closes;
 * `already` is what was read before. The
 * socket is paused again afterwards with nothing lost: every byte read is in the result.
 */
export function readFirstBytes(socket: Readable, already: Buffer): Promise<Buffer> {
  let buf = already;
  const settled = (): boolean => {
    if (buf.length >= SNIFF_MAX_BYTES) return true;
    const s = sniffName(buf);
    return s === null || 'name' in s;
  };
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
    const timer = setTimeout(done, SNIFF_WAIT_MS);
    timer.unref();
    socket.on('data', onData);
    socket.once('end', done);
    socket.once('close', done);
    socket.resume();
  });
}
