import { connect, type Socket } from 'node:net';
import { abortReason, dialThroughUpstream, ErrorCodes, GatehopError, type UpstreamProxy } from '../common/index.js';
import type { Dialer } from './http-get.js';

/** Straight out of this machine, names through the system resolver. */
export function directDialer(): Dialer {
  return {
    via: 'direct',
    dial: (host, port, signal) =>
      new Promise<Socket>((resolve, reject) => {
        if (signal.aborted) return reject(abortReason(signal, `connect to ${host}:${port}`));
        const s = connect({ host, port, noDelay: true });
        const done = (): void => {
          signal.removeEventListener('abort', onAbort);
          s.off('error', onError);
        };
        const onAbort = (): void => {
          done();
          s.destroy();
          reject(abortReason(signal, `connect to ${host}:${port}`));
        };
        const onError = (err: NodeJS.ErrnoException): void => {
          done();
          reject(
            new GatehopError(ErrorCodes.LIST_FETCH_FAILED, `connect to ${host}:${port}: ${err.code ?? err.message}`, {
              cause: err,
            }),
          );
        };
        signal.addEventListener('abort', onAbort, { once: true });
        s.once('error', onError);
        s.once('connect', () => {
          done();
          resolve(s);
        });
      }),
  };
}

/** Through the user's upstream proxy; the proxy resolves the names. */
export function upstreamDialer(up: UpstreamProxy): Dialer {
  return { via: 'upstream', dial: (host, port, signal) => dialThroughUpstream(up, host, port, { signal }) };
}
