import type { Duplex } from 'node:stream';
import { ErrorCodes, GatehopError, settleFirst } from '../common/index.js';
import { parseResponseHead } from './http-head.js';
import { Pack } from './pack.js';

/** SoftEther's NOOP_IGNORE: a PACK the server sends while it works, to be skipped. */
const NOOP_IGNORE = 2;
/** SoftEther's client gives up after this many (MAX_NOOP_PER_SESSION). */
const MAX_NOOPS = 30;

/** SoftEther's error numbers a client can act on (src/Cedar/Cedar.h). */
const ERRORS: Record<number, string> = {
  2: 'not a VPN server',
  4: 'protocol error',
  8: 'no such hub',
  9: 'authentication failed',
  10: 'the hub is stopped',
  12: 'access denied',
  13: 'session timed out',
  15: 'too many connections',
  20: 'too many sessions of this user',
  21: 'license error',
};
export const ERR_AUTH_FAILED = 9;

/** One HTTP POST with a body, as SoftEther's client sends them (Keep-Alive: the stream stays open). */
export function postHttp(stream: Duplex, path: string, host: string, contentType: string, body: Buffer): void {
  stream.write(
    Buffer.concat([
      Buffer.from(
        `POST ${path} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: ${contentType}\r\nConnection: Keep-Alive\r\nContent-Length: ${body.length}\r\n\r\n`,
        'latin1',
      ),
      body,
    ]),
  );
}

export interface PackAnswer {
  pack: Pack;
  /** Bytes that came after the answer in the same read (the start of the data stream). */
  rest: Buffer;
}

/**
 * The node's answer to a POST: `200`, `application/octet-stream`, a PACK within the bounds, its
 * `noop`s skipped; a PACK with `error` is GH_ERR_SOFTETHER_REFUSED (AUTH_FAILED for error 9).
 * The stream is paused when it returns: nothing is read past the answer until its owner listens.
 */
export function readPackAnswer(stream: Duplex, where: string, signal: AbortSignal): Promise<PackAnswer> {
  return settleFirst<PackAnswer>({ signal, what: where }, (settle) => {
    let buf: Buffer = Buffer.alloc(0);
    let noops = 0;
    const onData = (chunk: Buffer): void => {
      buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
      try {
        for (;;) {
          const head = parseResponseHead(buf);
          if (!head || buf.length < head.length + head.contentLength) return;
          if (head.status !== 200)
            throw new GatehopError(
              ErrorCodes.SOFTETHER_REFUSED,
              `${where} answered HTTP ${head.status} ${head.reason.slice(0, 60)}`,
            );
          const type = head.headers.get('content-type') ?? '';
          if (type.toLowerCase() !== 'application/octet-stream')
            throw new GatehopError(
              ErrorCodes.SOFTETHER_PROTOCOL,
              `${where} answered ${JSON.stringify(type.slice(0, 60))}, not a PACK (not a SoftEther server?)`,
            );
          const pack = Pack.decode(buf.subarray(head.length, head.length + head.contentLength));
          buf = buf.subarray(head.length + head.contentLength);
          if (pack.getInt('noop') === NOOP_IGNORE) {
            if (++noops > MAX_NOOPS) throw new GatehopError(ErrorCodes.SOFTETHER_PROTOCOL, `${where} sent only noops`);
            continue;
          }
          const error = pack.getInt('error') ?? 0;
          if (error !== 0)
            throw new GatehopError(
              error === ERR_AUTH_FAILED ? ErrorCodes.SOFTETHER_AUTH_FAILED : ErrorCodes.SOFTETHER_REFUSED,
              `${where} refused: ${ERRORS[error] ?? 'error'} (SoftEther error ${error})`,
            );
          settle.resolve({ pack, rest: Buffer.from(buf) });
          return;
        }
      } catch (err) {
        settle.reject(err as Error);
      }
    };
    const onError = (err: Error): void =>
      settle.reject(new GatehopError(ErrorCodes.EGRESS_FAILED, `${where}: ${err.message}`, { cause: err }));
    const onClose = (): void =>
      settle.reject(new GatehopError(ErrorCodes.SOFTETHER_REFUSED, `${where} closed the connection before answering`));
    stream.on('data', onData);
    stream.on('error', onError);
    stream.on('close', onClose);
    stream.resume();
    return () => {
      stream.off('data', onData);
      stream.off('error', onError);
      stream.off('close', onClose);
      stream.pause();
    };
  });
}
